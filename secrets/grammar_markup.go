package secrets

import (
	"strings"
)

// Markup: a secret's name and its value in XML, plist or HTML — an
// attribute that names the element (<entry key="db.password">x</entry>,
// <add key="SmtpPassword" value="x"/>, <Setting Name="ApiKey"><Value>x
// </Value></Setting>, <input name="pwd" value="x">) or sibling elements
// (<key>Password</key><string>x</string>, <dt>API key</dt><dd>x</dd>,
// <td>Password</td><td>x</td>, <name>api_token</name><value>x</value>).

// markupNode is a tag or the text between two tags.
type markupNode struct {
	tag     string // lower case; "" for text
	closing bool
	attrs   []markupAttr
	text    string // a text node's, trimmed
	s, e    int    // a text node's trimmed offsets
}

type markupAttr struct {
	name, value string
	s, e        int // the value's offsets
}

// parseMarkup reads the tags and text of text[from:to].
func parseMarkup(text string, from, to int) []markupNode {
	var nodes []markupNode
	pos := from
	for pos < to {
		lt := strings.IndexByte(text[pos:to], '<')
		if lt < 0 {
			lt = to - pos
		}
		if raw := text[pos : pos+lt]; strings.TrimSpace(raw) != "" {
			lead := len(raw) - len(strings.TrimLeft(raw, " \t\r\n"))
			t := strings.TrimSpace(raw)
			nodes = append(nodes, markupNode{text: t, s: pos + lead, e: pos + lead + len(t)})
		}
		pos += lt
		if pos >= to {
			break
		}
		gt := strings.IndexByte(text[pos:to], '>')
		if gt < 0 {
			break
		}
		n, ok := parseTag(text, pos, pos+gt)
		if ok {
			nodes = append(nodes, n)
		}
		pos += gt + 1
	}
	return nodes
}

// parseTag reads the tag text[lt:gt] ('<' at lt, '>' at gt).
func parseTag(text string, lt, gt int) (markupNode, bool) {
	i := lt + 1
	n := markupNode{}
	if i < gt && text[i] == '/' {
		n.closing = true
		i++
	}
	j := i
	for j < gt && (isNameByte(text[j]) || text[j] == ':') {
		j++
	}
	if j == i {
		return n, false // <!-- -->, <?xml ?>, a comparison
	}
	n.tag = asciiLower(text[i:j])
	for k := j; k < gt; {
		for k < gt && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r' || text[k] == '/') {
			k++
		}
		ns := k
		for k < gt && (isNameByte(text[k]) || text[k] == ':') {
			k++
		}
		if k == ns {
			k++
			continue
		}
		a := markupAttr{name: asciiLower(text[ns:k])}
		if k < gt && text[k] == '=' && k+1 < gt {
			k++
			if q := text[k]; q == '"' || q == '\'' {
				end := strings.IndexByte(text[k+1:gt], q)
				if end < 0 {
					break
				}
				a.s, a.e = k+1, k+1+end
				k = a.e + 1
			} else {
				a.s = k
				for k < gt && text[k] != ' ' && text[k] != '\t' && text[k] != '/' {
					k++
				}
				a.e = k
			}
			a.value = text[a.s:a.e]
		}
		n.attrs = append(n.attrs, a)
	}
	return n, true
}

func (n markupNode) attr(names ...string) (markupAttr, bool) {
	for _, a := range n.attrs {
		for _, name := range names {
			if a.name == name {
				return a, true
			}
		}
	}
	return markupAttr{}, false
}

// labelTags hold a name in sibling markup; valueTags the value after it.
var (
	labelTags = map[string]bool{"key": true, "dt": true, "th": true, "td": true, "name": true, "label": true, "b": true, "strong": true, "span": true, "code": true, "div": true, "li": true}
	valueTags = map[string]bool{"string": true, "dd": true, "td": true, "value": true, "data": true, "code": true, "span": true, "input": true, "pre": true, "div": true, "integer": true, "secret": true}
)

// markupValues appends the values the nodes name.
func markupValues(text string, nodes []markupNode, spans []span) []span {
	pending := rootKind(0) // a value is due: the next text, within a few nodes
	due := 0
	open := "" // the innermost open tag
	for i, n := range nodes {
		switch {
		case n.tag != "" && !n.closing:
			open = n.tag
			if a, ok := n.attr("key", "name", "id", "for", "property", "label"); ok {
				if kind, named := secretLabel(a.value); named && !strings.ContainsAny(a.value, " ") || named && len(a.value) < 40 {
					if v, ok := n.attr("value", "content"); ok {
						if plausibleSecret(v.value, kind) {
							spans = append(spans, span{v.s, v.e})
						}
					} else if n.tag != "input" && n.tag != "label" {
						pending, due = kind, i+4
					}
					continue
				}
			}
			if t, ok := n.attr("type"); ok && strings.EqualFold(t.value, "password") {
				if v, ok := n.attr("value"); ok && plausibleSecret(v.value, rootPassword) {
					spans = append(spans, span{v.s, v.e})
				}
			}
		case n.tag != "":
			if n.tag == open {
				open = ""
			}
		default: // text
			if pending != 0 && i <= due {
				if (open == "" || valueTags[open] || !labelTags[open]) && !strings.ContainsAny(n.text, " \t\n") && plausibleSecret(n.text, pending) {
					spans = append(spans, span{n.s, n.e})
				}
				pending = 0
				continue
			}
			pending = 0
			if labelTags[open] && len(n.text) <= 60 {
				if kind, ok := secretLabel(n.text); ok {
					pending, due = kind, i+4
				}
			}
		}
	}
	return spans
}
