package secrets

import (
	"strings"
)

// Paths: a secret's name as the parent of its value — JSON's
// "db_password": {"value": "x"}, DynamoDB's "api_token": {"S": "x"},
// "stripe_secret_key": {"live": "x", "test": "y"}, {"secrets": {"jwt":
// "x"}}, and YAML's db_password: then value: x indented below. A child
// whose key says what it holds (type, description, format, name, file,
// arn...) is metadata, not the secret.

// metaKeys are children that describe a secret rather than hold it.
var metaKeys = map[string]bool{
	"type": true, "description": true, "desc": true, "format": true, "sensitive": true, "arn": true, "name": true, "id": true,
	"version": true, "created": true, "updated": true, "createdat": true, "updatedat": true, "created_at": true, "updated_at": true,
	"minlength": true, "maxlength": true, "pattern": true, "title": true, "help": true, "label": true, "hint": true, "enum": true,
	"required": true, "$ref": true, "ref": true, "kind": true, "encoding": true, "algorithm": true, "length": true, "file": true,
	"path": true, "env": true, "environment": true, "key": true, "keyid": true, "key_id": true, "kid": true, "valuefrom": true,
	"secretkeyref": true, "secretref": true, "source": true, "provider": true, "vault": true, "region": true, "placeholder": true,
	"example": true, "examples": true, "default": true, "nullable": true, "readonly": true, "writeonly": true, "url": true,
	"uri": true, "ttl": true, "expires": true, "expiry": true, "expiration": true, "rotation": true, "status": true, "owner": true,
	"tags": true, "labels": true, "annotations": true, "mount": true, "mountpath": true, "external": true, "driver": true,
	"items": true, "properties": true, "scope": true, "usage": true, "policy": true, "fingerprint": true, "hash": true, "digest": true,
	"salt": true, "iterations": true, "username": true, "user": true, "login": true, "email": true, "host": true, "port": true,
}

// parentsIn appends the values of the parents whose names lie in the
// line text[ls:le], and returns where the last one ends.
func parentsIn(text, lower string, ls, le int, spans []span) ([]span, int) {
	line := text[ls:le]
	done := -1
	if !strings.Contains(line, "{") && !strings.HasSuffix(strings.TrimRight(line, " \t\r"), ":") {
		return spans, done
	}
	for _, kw := range rootKeywords {
		for from := ls; from < le; {
			i := strings.Index(lower[from:le], kw)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(kw)
			if p < done {
				continue
			}
			if end, sp, ok := jsonParent(text, p); ok {
				spans = append(spans, sp...)
				done = end
			} else if end, sp, ok := yamlParent(text, p); ok {
				spans = append(spans, sp...)
				done = end
			}
		}
	}
	return spans, done
}

// jsonParent: the root at p is inside a JSON key naming a secret whose
// value is an object; its string values under keys that are not metadata
// are the secret's.
func jsonParent(text string, p int) (int, []span, bool) {
	ks := strings.LastIndexByte(text[max(0, p-64):p], '"')
	if ks < 0 {
		return 0, nil, false
	}
	ks += max(0, p-64)
	ke := strings.IndexByte(text[p:min(len(text), p+64)], '"')
	if ke < 0 {
		return 0, nil, false
	}
	ke += p
	key := text[ks+1 : ke]
	i := skipBlanks(text, ke+1)
	if i >= len(text) || text[i] != ':' {
		return 0, nil, false
	}
	i = skipBlanks(text, i+1)
	if i >= len(text) || text[i] != '{' || strings.ContainsAny(key, " \t") {
		return 0, nil, false
	}
	kind, ok := secretLabel(key)
	if !ok || otherName.MatchString(key) {
		return 0, nil, false
	}
	var spans []span
	depth, child := 0, ""
	for j := i; j < len(text) && j < i+4096; j++ {
		switch text[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return j, spans, true
			}
		case '"':
			e := stringEndIn(text, j)
			s := text[j+1 : e]
			next := skipBlanks(text, e+1)
			if next < len(text) && text[next] == ':' {
				child = strings.ToLower(s)
			} else if child != "" && !metaKeys[child] && !otherValueName(child) && plausibleSecret(s, kind) {
				spans = append(spans, span{j + 1, e})
				child = ""
			}
			j = e
		}
	}
	return 0, nil, false
}

// stringEndIn is the index of the quote closing the JSON string opened at i.
func stringEndIn(text string, i int) int {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '"', '\n':
			return j
		}
	}
	return len(text) - 1
}

func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// yamlParent: the root at p is in a YAML key naming a secret with no
// value on its line; the more indented lines below are its children.
func yamlParent(text string, p int) (int, []span, bool) {
	ls := strings.LastIndexByte(text[:p], '\n') + 1
	le := lineEnd(text, p)
	line := text[ls:le]
	t := strings.TrimRight(line, " \t\r")
	if !strings.HasSuffix(t, ":") {
		return 0, nil, false
	}
	indent := len(t) - len(strings.TrimLeft(t, " "))
	name := strings.Trim(strings.TrimSpace(t[:len(t)-1]), `"'`)
	name = strings.TrimPrefix(name, "- ")
	if !isIdentifier(name) || otherName.MatchString(name) {
		return 0, nil, false
	}
	kind, ok := secretLabel(name)
	if !ok {
		return 0, nil, false
	}
	var spans []span
	pos := le + 1
	for n := 0; n < 20 && pos < len(text); n++ {
		e := lineEnd(text, pos)
		l := text[pos:e]
		if strings.TrimSpace(l) == "" {
			break
		}
		in := len(l) - len(strings.TrimLeft(l, " "))
		if in <= indent {
			break
		}
		k, v, found := strings.Cut(strings.TrimSpace(l), ":")
		k = strings.ToLower(strings.Trim(strings.TrimPrefix(k, "- "), `"' `))
		if found && isIdentifier(k) && !metaKeys[k] && !otherValueName(k) {
			v = strings.TrimSpace(v)
			if q := strings.Trim(v, `"'`); q != "" && q != v && (v[0] == '"' || v[0] == '\'') {
				v = q
			}
			if v != "" && !strings.ContainsAny(v, " \t#") && plausibleSecret(v, kind) {
				s := pos + strings.LastIndex(l, v)
				spans = append(spans, span{s, s + len(v)})
			}
		}
		pos = e + 1
	}
	return pos, spans, true
}
