package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// File names looked up in the repository root.
const (
	FileName       = ".debussy.yaml"
	LegacyFileName = ".debussy/config.yaml" // where the Python debussy kept its config
)

// EnvPrefix starts every environment override: DEBUSSY_<KEY upper-cased>.
const EnvPrefix = "DEBUSSY_"

// Source says where the configuration came from.
type Source struct {
	File  string   // the file that was read; "" when none
	Notes []string // things worth telling the user (an ignored second file, Python-era keys)
	Env   []string // DEBUSSY_* variables that set a value, in key order
}

// EnvVar names the environment variable that overrides key; the dots of a
// block's key become underscores (DEBUSSY_BUDGET_PHASE_TOKENS).
func EnvVar(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// origin is where a key's current value was set; zero for defaults.
type origin struct {
	file         string
	line, column int
	envVar       string
}

// Load resolves defaults < file < environment. The file is explicitFile when
// given (it must exist; a relative path is taken from the working directory),
// else root/.debussy.yaml, else root/.debussy/config.yaml. env is in
// os.Environ form; an empty DEBUSSY_* value counts as unset. Every problem
// found is reported at once; each error wraps ErrInvalid.
func Load(root, explicitFile string, env []string) (Config, Source, error) {
	var src Source
	path, err := pickFile(root, explicitFile, &src)
	if err != nil {
		return Config{}, src, err
	}
	cfg := Defaults()
	origins := map[string]origin{}
	var errs []error
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, src, &invalidError{msg: fmt.Sprintf("read config: %v", err), cause: err}
		}
		src.File = path
		fileErrs, err := decodeFile(path, data, isLegacyPath(path), &cfg, origins, &src)
		if err != nil {
			return Config{}, src, err
		}
		errs = append(errs, fileErrs...)
	}
	errs = append(errs, applyEnv(env, &cfg, origins, &src)...)
	errs = append(errs, cfg.validate(origins)...)
	if len(errs) > 0 {
		sortProblems(errs)
		return Config{}, src, errors.Join(errs...)
	}
	return cfg, src, nil
}

func pickFile(root, explicitFile string, src *Source) (string, error) {
	if explicitFile != "" {
		if _, err := os.Stat(explicitFile); err != nil {
			return "", &invalidError{msg: fmt.Sprintf("read config: %v", err), cause: err}
		}
		return explicitFile, nil
	}
	primary := filepath.Join(root, FileName)
	legacy := filepath.Join(root, filepath.FromSlash(LegacyFileName))
	hasMain, hasLegacy := exists(primary), exists(legacy)
	switch {
	case hasMain && hasLegacy:
		src.Notes = append(src.Notes, fmt.Sprintf("both %s and %s exist; using %s and ignoring %s",
			FileName, LegacyFileName, FileName, LegacyFileName))
		return primary, nil
	case hasMain:
		return primary, nil
	case hasLegacy:
		return legacy, nil
	}
	return "", nil
}

// exists treats anything but "not there" as present, so an unreadable file
// is reported by the read rather than silently skipped.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func isLegacyPath(path string) bool {
	return filepath.Base(path) == "config.yaml" && filepath.Base(filepath.Dir(path)) == ".debussy"
}

// Keys the Python debussy wrote into .debussy/config.yaml (its `init` wrote
// all of them) that mean nothing here. Accepted there so an old repository
// still runs; rejected in .debussy.yaml like any unknown key.
func legacyIgnoredKeys() []string {
	return []string{"output", "interactive", "notifications", "strict_compliance", "learnings"}
}

// decodeFile applies the file's keys to cfg. Problems with single keys are
// returned as the first result so that all of them are reported together;
// the error is for a file that cannot be read as a mapping at all.
func decodeFile(path string, data []byte, legacy bool, cfg *Config, origins map[string]origin, src *Source) ([]error, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(path, data, err)
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil || doc.Body.Type() == ast.CommentType {
			continue
		}
		if body != nil {
			return nil, &invalidError{msg: fmt.Sprintf("%s: only one YAML document is allowed", at(path, doc.Body))}
		}
		body = doc.Body
	}
	if body == nil {
		return nil, nil // empty file: defaults
	}
	var values []*ast.MappingValueNode
	switch n := body.(type) {
	case *ast.MappingNode:
		values = n.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{n}
	default:
		return nil, &invalidError{msg: fmt.Sprintf("%s: the file must be a mapping of key: value, got %s", at(path, body), describe(body))}
	}

	var ignored []string
	var legacyTimeout *ast.MappingValueNode
	errs := decodeMapping(path, "", values, cfg, origins, func(key string, mv *ast.MappingValueNode) bool {
		switch {
		case legacy && slices.Contains(legacyIgnoredKeys(), key):
			ignored = append(ignored, key)
		case legacy && key == "timeout":
			legacyTimeout = mv
		default:
			return false
		}
		return true
	})
	if len(ignored) > 0 {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: ignoring Python debussy keys with no meaning here: %s",
			path, strings.Join(ignored, ", ")))
	}
	if legacyTimeout != nil {
		if err := applyLegacyTimeout(path, legacyTimeout, cfg, origins, src); err != nil {
			errs = append(errs, err)
		}
	}
	return errs, nil
}

// decodeMapping applies the keys of one mapping, prefix being the dotted
// path of the block it is ("" at the top, "budget." inside budget:).
// extra takes keys this package does not know (legacy ones) and reports
// whether it did.
func decodeMapping(path, prefix string, values []*ast.MappingValueNode, cfg *Config, origins map[string]origin,
	extra func(key string, mv *ast.MappingValueNode) bool) []error {
	rs := rules()
	var errs []error
	for _, mv := range values {
		name := keyName(mv.Key)
		key := prefix + name
		fv, ok := field(cfg, key)
		if !ok {
			if extra != nil && extra(key, mv) {
				continue
			}
			errs = append(errs, fieldErrorAt(path, mv.Key.GetToken(), &FieldError{
				Key: key, Problem: "unknown key" + suggest(name, blockKeys(prefix)),
				Allowed: strings.Join(blockKeys(prefix), ", "),
			}))
			continue
		}
		if isBlock(fv.Type()) {
			n := unwrap(mv.Value)
			switch m := n.(type) {
			case *ast.NullNode:
			case *ast.MappingNode:
				errs = append(errs, decodeMapping(path, key+".", m.Values, cfg, origins, nil)...)
			case *ast.MappingValueNode:
				errs = append(errs, decodeMapping(path, key+".", []*ast.MappingValueNode{m}, cfg, origins, nil)...)
			default:
				errs = append(errs, fieldErrorAt(path, nodeToken(mv.Value), &FieldError{
					Key: key, Problem: fmt.Sprintf("got %s, want a mapping", describe(n)),
					Allowed: "a mapping of " + strings.Join(blockKeys(key+"."), ", "),
				}))
			}
			continue
		}
		problem, tok := decodeValue(mv.Value, fv)
		if problem != "" {
			if tok == nil {
				tok = nodeToken(mv.Value)
			}
			errs = append(errs, fieldErrorAt(path, tok, &FieldError{Key: key, Problem: problem, Allowed: rs[key].allowed}))
			continue
		}
		p := nodeToken(mv.Value).Position
		origins[key] = origin{file: path, line: p.Line, column: p.Column}
	}
	return errs
}

// blockKeys are the keys allowed in the block at prefix, as written there
// when inside a block ("tokens"), else whole.
func blockKeys(prefix string) []string {
	var keys []string
	for _, k := range Keys() {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		// budget.phase.tokens is listed as budget at the top, as phase in
		// budget:.
		rest, _, _ = strings.Cut(rest, ".")
		if !slices.Contains(keys, rest) {
			keys = append(keys, rest)
		}
	}
	return keys
}

// applyLegacyTimeout reads the Python debussy's `timeout` (seconds per phase)
// as session_timeout, unless the file also sets session_timeout.
func applyLegacyTimeout(path string, mv *ast.MappingValueNode, cfg *Config, origins map[string]origin, src *Source) error {
	if _, set := origins["session_timeout"]; set {
		src.Notes = append(src.Notes, fmt.Sprintf("%s: ignoring Python debussy key timeout: session_timeout is set", path))
		return nil
	}
	n := unwrap(mv.Value)
	var secs int64
	if n.Type() == ast.IntegerType {
		_ = yaml.NodeToValue(n, &secs)
	}
	if secs <= 0 {
		return fieldErrorAt(path, mv.Value.GetToken(), &FieldError{
			Key: "timeout", Problem: describe(n) + " is not a positive number of seconds",
			Allowed: "seconds > 0 (Python debussy); prefer session_timeout",
		})
	}
	cfg.SessionTimeout = Duration(time.Duration(secs) * time.Second)
	p := mv.Value.GetToken().Position
	origins["session_timeout"] = origin{file: path, line: p.Line, column: p.Column}
	src.Notes = append(src.Notes, fmt.Sprintf("%s: reading Python debussy key timeout: %d (seconds) as session_timeout: %s",
		path, secs, cfg.SessionTimeout))
	return nil
}

// applyEnv sets every key whose DEBUSSY_<KEY> variable is non-empty.
// Scalars are parsed as Go would (strconv, time.ParseDuration); gate_commands
// and extra_args take YAML or JSON flow syntax: '{test: go test ./...}',
// '["--add-dir", "../lib"]'.
func applyEnv(env []string, cfg *Config, origins map[string]origin, src *Source) []error {
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, EnvPrefix) {
			vals[k] = v // the last one wins, as in os/exec
		}
	}
	rs := rules()
	var errs []error
	src.Notes = append(src.Notes, misspeltEnv(vals)...)
	for _, key := range Keys() {
		name := EnvVar(key)
		v := vals[name]
		if v == "" {
			continue
		}
		fv, _ := field(cfg, key)
		if problem := parseEnv(v, fv); problem != "" {
			errs = append(errs, &FieldError{Key: key, EnvVar: name, Problem: problem, Allowed: rs[key].allowed})
			continue
		}
		origins[key] = origin{envVar: name}
		src.Env = append(src.Env, name)
	}
	return errs
}

func parseEnv(v string, fv reflect.Value) string {
	t := strings.TrimSpace(v)
	switch {
	case fv.Type() == reflect.TypeFor[Duration]():
		d, err := time.ParseDuration(t)
		if err != nil {
			return fmt.Sprintf("%q is not a duration", v)
		}
		fv.Set(reflect.ValueOf(Duration(d)))
	case fv.Kind() == reflect.String:
		fv.SetString(v)
	case fv.Kind() == reflect.Int, fv.Kind() == reflect.Int64:
		i, err := strconv.ParseInt(t, 10, fv.Type().Bits())
		if err != nil {
			return fmt.Sprintf("%q is not an integer", v)
		}
		fv.SetInt(i)
	case fv.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return fmt.Sprintf("%q is not a number", v)
		}
		fv.SetFloat(f)
	case fv.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(t)
		if err != nil {
			return fmt.Sprintf("%q is not true or false", v)
		}
		fv.SetBool(b)
	default: // map or slice
		ptr := reflect.New(fv.Type())
		if err := decodeYAML(func() error { return yaml.UnmarshalWithOptions([]byte(v), ptr.Interface(), yaml.Strict()) }); err != nil {
			kind := "a list"
			if fv.Kind() == reflect.Map {
				kind = "a mapping"
			}
			return fmt.Sprintf("%q is not %s in YAML or JSON flow syntax", v, kind)
		}
		fv.Set(ptr.Elem())
	}
	return ""
}

// sortProblems orders file problems by position, then environment ones,
// then the rest (keys set by the caller), keeping key order within each.
func sortProblems(errs []error) {
	rank := func(e error) (int, string, int, int) {
		var fe *FieldError
		if !errors.As(e, &fe) {
			return 0, "", 0, 0
		}
		switch {
		case fe.File != "":
			return 1, fe.File, fe.Line, fe.Column
		case fe.EnvVar != "":
			return 2, "", 0, 0
		}
		return 3, "", 0, 0
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		ra, fa, la, ca := rank(a)
		rb, fb, lb, cb := rank(b)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(fa, fb), cmp.Compare(la, lb), cmp.Compare(ca, cb))
	})
}

// misspeltEnv notes the DEBUSSY_* variables that set nothing but are a
// near miss of one that does (DEBUSSY_CONTEXT_TRESHOLD): silently ignored,
// the user would believe the setting applies. Variables that are no
// near miss (debussy's own for the agent, tests', other tools') pass.
func misspeltEnv(vals map[string]string) []string {
	known := map[string]bool{}
	var names []string
	for _, key := range Keys() {
		known[EnvVar(key)] = true
		names = append(names, EnvVar(key))
	}
	var notes []string
	for name, v := range vals {
		if v == "" || known[name] {
			continue
		}
		if s := suggest(name, names); s != "" {
			notes = append(notes, fmt.Sprintf("ignoring %s: not a debussy setting%s", name, s))
		}
	}
	slices.Sort(notes)
	return notes
}

// suggest returns " (did you mean x?)" for a near miss.
func suggest(key string, keys []string) string {
	best, bestDist := "", 3
	for _, k := range keys {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
