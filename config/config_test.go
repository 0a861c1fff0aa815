package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/golden"

	"github.com/goccy/go-yaml"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultsValid(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

func TestEveryFieldTaggedAndRuled(t *testing.T) {
	rs := rules()
	leaves := 0
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			y, j := yamlKey(f), strings.Split(f.Tag.Get("json"), ",")[0]
			if y == "" || y != j {
				t.Errorf("field %s: yaml tag %q and json tag %q must both be set and equal", f.Name, y, j)
			}
			if isBlock(f.Type) {
				walk(f.Type, prefix+y+".")
				continue
			}
			leaves++
			if _, ok := rs[prefix+y]; !ok {
				t.Errorf("key %s has no rule (allowed text)", prefix+y)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	if len(rs) != leaves || len(Keys()) != leaves {
		t.Errorf("%d rules and %d Keys() for %d keys", len(rs), len(Keys()), leaves)
	}
}

// keyIndex is where key is set in a YAML document, from offset on: a
// dotted key is its last part, indented two spaces per dot.
func keyIndex(doc, key string, from int) int {
	depth := strings.Count(key, ".")
	leaf := key[strings.LastIndex(key, ".")+1:]
	needle := "\n" + strings.Repeat("  ", depth) + leaf + ":"
	if from == 0 && strings.HasPrefix(doc, needle[1:]) {
		return 0
	}
	i := strings.Index(doc[from:], needle)
	if i < 0 {
		return -1
	}
	return from + i
}

func TestExampleFile(t *testing.T) {
	path := filepath.Join("..", ".debussy.example.yaml")
	if golden.Update() {
		writeFile(t, path, string(Example()))
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != string(Example()) {
		t.Fatalf("%s differs from config/example.yaml (edit the latter, run go test -update): %v", path, err)
	}
	cfg, src, err := Load(t.TempDir(), path, nil)
	if err != nil {
		t.Fatalf("example does not load: %v", err)
	}
	if src.File != path || len(src.Notes) != 0 {
		t.Errorf("source = %+v", src)
	}
	if !reflect.DeepEqual(cfg, Defaults()) {
		t.Errorf("example differs from Defaults():\n got %+v\nwant %+v", cfg, Defaults())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, key := range Keys() {
		i := keyIndex(string(data), key, at)
		if i < 0 {
			t.Errorf("example does not set key %s (in Keys() order)", key)
			continue
		}
		at = i + 1
	}

	// Plain goccy decoding of the whole struct agrees (Duration's
	// UnmarshalYAML, every field tagged).
	var direct Config
	if err := yaml.UnmarshalWithOptions(data, &direct, yaml.Strict()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(direct, Defaults()) {
		t.Errorf("yaml.Unmarshal of the example differs from Defaults():\n got %+v", direct)
	}
}

func TestLoadPrecedence(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, FileName), "context_threshold: 70\nmax_restarts: 5\nmodel: from-file\n")
	env := []string{
		"PATH=/bin",
		"DEBUSSY_MAX_RESTARTS=7",
		"DEBUSSY_MODEL=", // empty counts as unset
		"DEBUSSY_RUN_ID=20261121-2230-4f2c",
		"DEBUSSY_SESSION_TIMEOUT=90s",
		"DEBUSSY_GATE_COMMANDS={test: go test ./..., lint: \"go vet ./...\"}",
		"DEBUSSY_EXTRA_ARGS=[\"--max-turns\", \"200\"]",
		"DEBUSSY_ALLOW_DIRTY=1",
	}
	cfg, src, err := Load(root, "", env)
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.ContextThreshold = 70 // file
	want.Model = "from-file"   // file; the empty env value does not clear it
	want.MaxRestarts = 7       // env over file
	want.SessionTimeout = Duration(90 * time.Second)
	want.GateCommands = map[string]string{"test": "go test ./...", "lint": "go vet ./..."}
	want.ExtraArgs = []string{"--max-turns", "200"}
	want.AllowDirty = true
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
	wantEnv := []string{"DEBUSSY_MAX_RESTARTS", "DEBUSSY_SESSION_TIMEOUT", "DEBUSSY_ALLOW_DIRTY", "DEBUSSY_GATE_COMMANDS", "DEBUSSY_EXTRA_ARGS"}
	if !reflect.DeepEqual(src.Env, wantEnv) {
		t.Errorf("src.Env = %v, want %v", src.Env, wantEnv)
	}
	if src.File != filepath.Join(root, FileName) {
		t.Errorf("src.File = %q", src.File)
	}

	// Flags: the caller sets fields, then validates.
	cfg.MaxRestarts = 1
	if err := cfg.Validate(); err != nil || cfg.MaxRestarts != 1 {
		t.Errorf("after setting a flag: %v", err)
	}
}

func TestLoadFiles(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		explicit  string
		wantFile  string
		wantNotes []string // substrings, one per note
		check     func(t *testing.T, c Config)
	}{
		{name: "no file", check: func(t *testing.T, c Config) {
			if !reflect.DeepEqual(c, Defaults()) {
				t.Errorf("not defaults: %+v", c)
			}
		}},
		{
			name:     "empty file",
			files:    map[string]string{FileName: ""},
			wantFile: FileName,
			check: func(t *testing.T, c Config) {
				if !reflect.DeepEqual(c, Defaults()) {
					t.Errorf("not defaults: %+v", c)
				}
			},
		},
		{
			name:     "comments only and null value",
			files:    map[string]string{FileName: "# nothing\nmodel:\n"},
			wantFile: FileName,
			check: func(t *testing.T, c Config) {
				if !reflect.DeepEqual(c, Defaults()) {
					t.Errorf("not defaults: %+v", c)
				}
			},
		},
		{
			name:     "legacy location",
			files:    map[string]string{LegacyFileName: "max_retries: 4\n"},
			wantFile: LegacyFileName,
			check: func(t *testing.T, c Config) {
				if c.MaxRetries != 4 {
					t.Errorf("max_retries = %d", c.MaxRetries)
				}
			},
		},
		{
			name:      "both files: .debussy.yaml wins",
			files:     map[string]string{FileName: "max_retries: 1\n", LegacyFileName: "max_retries: 4\n"},
			wantFile:  FileName,
			wantNotes: []string{"using .debussy.yaml and ignoring .debussy/config.yaml"},
			check: func(t *testing.T, c Config) {
				if c.MaxRetries != 1 {
					t.Errorf("max_retries = %d", c.MaxRetries)
				}
			},
		},
		{
			name: "python debussy config",
			files: map[string]string{LegacyFileName: "interactive: true\nlearnings: false\nmax_retries: 2\nmodel: haiku\n" +
				"notifications:\n  enabled: true\n  provider: desktop\noutput: terminal\nstrict_compliance: true\ntimeout: 1800\n"},
			wantFile:  LegacyFileName,
			wantNotes: []string{"ignoring Python debussy keys with no meaning here: interactive, learnings, notifications, output, strict_compliance", "timeout: 1800 (seconds) as session_timeout: 30m"},
			check: func(t *testing.T, c Config) {
				if c.Model != "haiku" || c.SessionTimeout != Duration(30*time.Minute) {
					t.Errorf("model %q session_timeout %s", c.Model, c.SessionTimeout)
				}
			},
		},
		{
			name:     "explicit file beats both",
			files:    map[string]string{FileName: "max_retries: 1\n", "other.yaml": "max_retries: 9\n"},
			explicit: "other.yaml",
			wantFile: "other.yaml",
			check: func(t *testing.T, c Config) {
				if c.MaxRetries != 9 {
					t.Errorf("max_retries = %d", c.MaxRetries)
				}
			},
		},
		{
			name:     "anchors, tags and quoted keys",
			files:    map[string]string{FileName: "\"model\": !!str opus\ngate_commands:\n  test: &t go test ./...\n  again: *t\n"},
			wantFile: FileName,
			check: func(t *testing.T, c Config) {
				if c.Model != "opus" || c.GateCommands["again"] != "go test ./..." {
					t.Errorf("got %+v", c)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(root, name), content)
			}
			explicit := ""
			if tt.explicit != "" {
				explicit = filepath.Join(root, tt.explicit)
			}
			cfg, src, err := Load(root, explicit, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantFile := ""
			if tt.wantFile != "" {
				wantFile = filepath.Join(root, filepath.FromSlash(tt.wantFile))
			}
			if src.File != wantFile {
				t.Errorf("File = %q, want %q", src.File, wantFile)
			}
			if len(src.Notes) != len(tt.wantNotes) {
				t.Fatalf("notes = %q, want %d", src.Notes, len(tt.wantNotes))
			}
			for i, n := range tt.wantNotes {
				if !strings.Contains(src.Notes[i], n) {
					t.Errorf("note %q does not contain %q", src.Notes[i], n)
				}
			}
			tt.check(t, cfg)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // written to .debussy.yaml unless empty
		env  []string
		want []string // one line per problem, "FILE" replaced by the path
	}{
		{
			name: "unknown key",
			file: "model: x\ncontxt_threshold: 70\n",
			want: []string{"FILE:2:1: contxt_threshold: unknown key (did you mean context_threshold?); allowed: claude_bin, model, fallback_model, permission_mode,"},
		},
		{
			name: "bad types",
			file: "context_threshold: eighty\nauto_commit: yes\nmax_retries: 1.5\nsession_timeout: 90\nmodel: [a]\nextra_args: --foo\ngate_commands:\n  test: [a, b]\n",
			want: []string{
				`FILE:1:20: context_threshold: "eighty" is not an integer; allowed: an integer from 1 to 100`,
				`FILE:2:14: auto_commit: "yes" is not true or false; allowed: true or false`,
				`FILE:3:14: max_retries: 1.5 is not an integer; allowed: an integer >= 0`,
				`FILE:4:18: session_timeout: "90" is not a duration; allowed: a Go duration greater than 0`,
				`FILE:5:8: model: got a list, want a string; allowed:`,
				`FILE:6:13: extra_args: got "--foo", want a list; allowed:`,
				`FILE:8:9: gate_commands: cannot unmarshal []interface {} into Go value of type string; allowed: a mapping`,
			},
		},
		{
			name: "bad values",
			file: "permission_mode: yolo\ncontext_threshold: 150\ncontext_window: 500\nstop_grace: 0s\nlog_format: xml\nextra_args: [--model=opus, -v]\ngate_commands: {lint: \"\"}\n",
			want: []string{
				`FILE:1:18: permission_mode: "yolo" is not one of the allowed values; allowed: bypassPermissions, acceptEdits, default, plan`,
				`FILE:2:20: context_threshold: 150 is out of range; allowed:`,
				`FILE:3:17: context_window: 500 is out of range; allowed: 0 (detect from the model) or an integer >= 1000`,
				`FILE:4:13: stop_grace: 0s is not greater than 0; allowed:`,
				`FILE:5:13: log_format: "xml" is not one of the allowed values; allowed: text, json`,
				`FILE:6:13: extra_args: "--model=opus" is set by debussy; allowed:`,
				`FILE:7:16: gate_commands: gate "lint" has an empty command; allowed:`,
			},
		},
		{
			name: "sandbox",
			file: "sandbox: maybe\nsandbox_write: [build, \"~/.npm\"]\nsandbox_allow_domains: [\"https://x.org\", \"*.ok.org\", \"a.*.org\"]\nsandbox_deny_read: [\"\"]\n",
			want: []string{
				`FILE:1:10: sandbox: "maybe" is not one of the allowed values; allowed: auto (bound the run`,
				`FILE:2:16: sandbox_write: "build" is neither absolute nor under ~; allowed: a list of absolute or ~/ paths`,
				`FILE:3:24: sandbox_allow_domains: "https://x.org" is not a host name (no scheme, port, path or inner *), "a.*.org" is not a host name`,
				`FILE:4:20: sandbox_deny_read: an empty path; allowed:`,
			},
		},
		{
			name: "worktree setup",
			file: "parallel: 2\nworktree_setup: \"  \"\nworktree_setup_timeout: -1m\n",
			want: []string{
				`FILE:2:17: worktree_setup: is blank; allowed: a shell command run in each new phase worktree`,
				`FILE:3:25: worktree_setup_timeout: -1m is not greater than 0; allowed: a Go duration`,
			},
		},
		{
			name: "block collections point at their first entry",
			file: "gate_commands:\n  lint: \"\"\nextra_args:\n  - -p\n",
			want: []string{
				`FILE:2:3: gate_commands: gate "lint" has an empty command; allowed:`,
				`FILE:4:3: extra_args: "-p" is set by debussy; allowed:`,
			},
		},
		{
			name: "redact_allow entries",
			file: "model: x\nredact_allow:\n  - test-token-123\n  - \"/sk-test-[/\"\n  - \"\"\n",
			want: []string{
				`FILE:3:3: redact_allow: allow entry "/sk-test-[/": error parsing regexp: missing closing ]: ` + "`[`" + `, allow entry is empty; allowed: a list of values that are not secrets`,
			},
		},
		{
			name: "redact_deny entries",
			file: "model: x\nredact_deny:\n  - corp-internal-42\n  - \"/a*/\"\n",
			want: []string{
				`FILE:3:3: redact_deny: deny entry "/a*/" matches the empty string; allowed: a list of values always redacted`,
			},
		},
		{
			name: "syntax error",
			file: "model: x\n  context_threshold: 70\n",
			// The key indented under a value is what to fix, not the value.
			want: []string{"FILE:2:3: mapping value is not allowed in this context", "    2 |   context_threshold: 70", "      |   ^"},
		},
		{
			name: "duplicate key",
			file: "model: x\nmodel: y\n",
			want: []string{`FILE:2:1: mapping key "model" already defined at [1:1]`, "    2 | model: y", "      | ^"},
		},
		{
			name: "unclosed list",
			file: "extra_args: [a, b\nmodel: x\nmax_retries: 1\n",
			want: []string{"FILE:1:13: ',' or ']' must be specified", "    1 | extra_args: [a, b", "      |             ^"},
		},
		{
			name: "not a mapping",
			file: "- model\n",
			want: []string{"FILE:1:1: the file must be a mapping of key: value, got a list"},
		},
		{
			name: "two documents",
			file: "model: x\n---\nmodel: y\n",
			want: []string{"FILE:3:1: only one YAML document is allowed"},
		},
		{
			name: "python keys are unknown in .debussy.yaml",
			file: "timeout: 1800\n",
			want: []string{"FILE:1:1: timeout: unknown key; allowed:"},
		},
		{
			name: "env values",
			env:  []string{"DEBUSSY_CONTEXT_THRESHOLD=abc", "DEBUSSY_AUTO_COMMIT=yes", "DEBUSSY_IDLE_TIMEOUT=10", "DEBUSSY_EXTRA_ARGS={a: b}", "DEBUSSY_MAX_RESTARTS=-1"},
			want: []string{
				`DEBUSSY_CONTEXT_THRESHOLD: "abc" is not an integer; allowed:`,
				`DEBUSSY_IDLE_TIMEOUT: "10" is not a duration; allowed:`,
				`DEBUSSY_AUTO_COMMIT: "yes" is not true or false; allowed:`,
				`DEBUSSY_EXTRA_ARGS: "{a: b}" is not a list in YAML or JSON flow syntax; allowed:`,
				`DEBUSSY_MAX_RESTARTS: -1 is negative; allowed:`,
			},
		},
		{
			// go-yaml v1.19.2 panics on a tag over a scalar decoded into a slice.
			name: "tagged scalar for a list",
			file: "extra_args: !x 0\n",
			env:  []string{"DEBUSSY_REDACT_ALLOW=!0 0"},
			want: []string{
				`FILE:1:13: extra_args: got "0", want a list; allowed:`,
				`DEBUSSY_REDACT_ALLOW: "!0 0" is not a list in YAML or JSON flow syntax; allowed:`,
			},
		},
		{
			// The fuzzer's case: a default compared with a set key has no
			// file:line; the problem is the set key's, at its place.
			name: "a set key against a default",
			file: "model: x\nnudge_repeat: 6\n",
			env:  []string{"DEBUSSY_ZONE_DELEGATIONS_RED=1"},
			want: []string{
				"FILE:2:15: nudge_repeat: makes the default nudge_repeat_restart invalid: 5 is not greater than nudge_repeat (6); allowed:",
				"DEBUSSY_ZONE_DELEGATIONS_RED: makes the default zone_delegations_yellow invalid: 8 is not below the red threshold 1; allowed:",
			},
		},
		{
			name: "file and env problems together",
			file: "max_retries: -1\n",
			env:  []string{"DEBUSSY_LOG_FORMAT=xml"},
			want: []string{
				"FILE:1:14: max_retries: -1 is negative; allowed:",
				`DEBUSSY_LOG_FORMAT: "xml" is not one of the allowed values; allowed: text, json`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, FileName)
			if tt.file != "" {
				writeFile(t, path, tt.file)
			}
			_, _, err := Load(root, "", tt.env)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				w = strings.ReplaceAll(w, "FILE", path)
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d:\n got %s\nwant %s...", i, lines[i], w)
				}
			}
		})
	}
}

func TestLoadMissingExplicitFile(t *testing.T) {
	_, _, err := Load(t.TempDir(), filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("error does not name the file: %v", err)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	c := Defaults()
	c.ClaudeBin = " "
	c.PermissionMode = "yolo"
	c.ContextThreshold = 0
	c.ToolCallThreshold = -1
	c.MaxRestarts = -1
	c.ContextWindow = 999
	c.MaxRetries = -2
	c.SessionTimeout = 0
	c.IdleTimeout = -1
	c.GateTimeout = 0
	c.StopGrace = 0
	c.GateCommands = map[string]string{"": "x", "test": " "}
	c.ExtraArgs = []string{"-p", "--output-format=json", "--max-turns", "3"}
	c.LogFormat = "yaml"
	err := c.Validate()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"claude_bin: is empty",
		`permission_mode: "yolo" is not one of the allowed values`,
		"context_threshold: 0 is out of range",
		"tool_call_threshold: -1 is negative",
		"max_restarts: -1 is negative",
		"context_window: 999 is out of range",
		"max_retries: -2 is negative",
		"session_timeout: 0s is not greater than 0",
		"idle_timeout: -1ns is not greater than 0",
		"gate_timeout: 0s is not greater than 0",
		"stop_grace: 0s is not greater than 0",
		`gate_commands: a gate has an empty name, gate "test" has an empty command`,
		`extra_args: "-p" is set by debussy, "--output-format=json" is set by debussy`,
		`log_format: "yaml" is not one of the allowed values`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w+"; allowed: ") {
			t.Errorf("problem %d:\n got %s\nwant %s; allowed: ...", i, lines[i], w)
		}
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Key != "claude_bin" {
		t.Errorf("errors.As FieldError: %+v", fe)
	}
}

// TestStageKeys checks the rules of the keys that tune stages, zones and
// nudges, one problem at a time.
func TestStageKeys(t *testing.T) {
	tests := []struct {
		name string
		set  func(c *Config)
		want string // "" when valid
	}{
		{"defaults", func(c *Config) {}, ""},
		{"zones disabled", func(c *Config) { c.ZoneToolCallsYellow, c.ZoneToolCallsRed = 0, 0 }, ""},
		{"only red", func(c *Config) { c.ZoneLargeReadsYellow = 0 }, ""},
		{"yellow at red", func(c *Config) { c.ZoneToolCallsYellow = 250 }, "zone_tool_calls_yellow: 250 is not below the red threshold 250"},
		{"zone action handoff", func(c *Config) { c.ZoneAction = ZoneActionHandoff }, ""},
		{"zone action unknown", func(c *Config) { c.ZoneAction = "stop" }, `zone_action: "stop" is not one of the allowed values`},
		{"negative red", func(c *Config) { c.ZoneDelegationsRed = -1 }, "zone_delegations_red: -1 is negative"},
		{"repeat of one", func(c *Config) { c.NudgeRepeat = 1 }, "nudge_repeat: 1 is out of range"},
		{"restart not above repeat", func(c *Config) { c.NudgeRepeatRestart = 3 }, "nudge_repeat_restart: 3 is not greater than nudge_repeat (3)"},
		{"restart never", func(c *Config) { c.NudgeRepeatRestart = 0 }, ""},
		{"window too small", func(c *Config) { c.NudgeRepeatWindow = 4 }, "nudge_repeat_window: 4 is smaller than nudge_repeat (3) or nudge_repeat_restart (5), or below 1"},
		{"grace time zero", func(c *Config) { c.HandoffGraceTime = 0 }, "handoff_grace_time: 0s is not greater than 0"},
		{"grace calls negative", func(c *Config) { c.HandoffGraceCalls = -1 }, "handoff_grace_calls: -1 is negative"},
		{"cooldown negative", func(c *Config) { c.NudgeCooldown = -1 }, "nudge_cooldown: -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Defaults()
			tt.set(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want+"; allowed: ")):
				t.Fatalf("err = %v, want %s; allowed: ...", err, tt.want)
			}
		})
	}
	// Each key is also read from the environment.
	cfg, _, err := Load(t.TempDir(), "", []string{"DEBUSSY_HANDOFF=false", "DEBUSSY_ZONE_TOOL_CALLS_RED=300", "DEBUSSY_HANDOFF_GRACE_TIME=30s"})
	if err != nil || cfg.Handoff || cfg.ZoneToolCallsRed != 300 || cfg.HandoffGraceTime != Duration(30*time.Second) {
		t.Errorf("env: %+v, %v", cfg, err)
	}
}

func TestYAML(t *testing.T) {
	c := Defaults()
	c.Model = "claude-sonnet-4-5"
	c.SessionTimeout = Duration(90 * time.Minute)
	c.GateCommands = map[string]string{"test": "go test ./...", "lint": "golangci-lint run: all"}
	c.ExtraArgs = []string{"--max-turns", "200"}
	got := c.YAML()

	golden.Check(t, filepath.Join("testdata", "config.golden.yaml"), []byte(got))

	// Keys appear in Keys() order.
	last := -1
	for _, k := range Keys() {
		i := keyIndex(got, k, last+1)
		if i <= last {
			t.Errorf("key %s out of order", k)
		}
		last = max(last, i)
	}

	// What YAML() prints loads back to the same config.
	for _, in := range []Config{c, Defaults(), {}} {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, FileName), in.YAML())
		back, _, err := Load(root, "", nil)
		if in.ClaudeBin == "" { // the zero Config is invalid; only check it parses
			if err == nil || strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "not an integer") {
				t.Errorf("zero config round trip: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, in) {
			t.Errorf("round trip:\n got %+v\nwant %+v", back, in)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{2 * time.Hour, "2h"},
		{10 * time.Minute, "10m"},
		{60 * time.Second, "1m"},
		{90 * time.Second, "1m30s"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + time.Second, "1h0m1s"},
		{1500 * time.Millisecond, "1.5s"},
		{0, "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			d := Duration(tt.d)
			if d.String() != tt.want {
				t.Errorf("String() = %q, want %q", d.String(), tt.want)
			}
			b, err := json.Marshal(d)
			if err != nil || string(b) != `"`+tt.want+`"` {
				t.Errorf("json = %s, %v", b, err)
			}
			var back Duration
			if err := json.Unmarshal(b, &back); err != nil || back != d {
				t.Errorf("json round trip = %v, %v", back, err)
			}
		})
	}
	var d Duration
	if err := json.Unmarshal([]byte(`"soon"`), &d); err == nil {
		t.Error("bad duration accepted")
	}
}

// TestBudgetKeys checks the budget: block: nested keys from the file and the
// environment, and each problem with its file:line.
func TestBudgetKeys(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, FileName), `budget:
  phase: {tokens: 2_000_000, cost_usd: 2.5}
  plan:
    duration: 3h
  enforcement: adaptive
  restart_threshold: 0.75
  prices:
    claude-opus-4-8: {input: 5, output: 25, cache_write: 6.25, cache_read: 0.5}
`)
	cfg, src, err := Load(root, "", []string{"DEBUSSY_BUDGET_PHASE_TOKENS=1000", "DEBUSSY_BUDGET_PLAN_COST_USD=10", "DEBUSSY_BUDGET_MIN_COMPLETION_PROBABILITY=0.6"})
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults().Budget
	want.Phase = Limits{Tokens: 1000, CostUSD: 2.5}
	want.Plan = Limits{CostUSD: 10, Duration: Duration(3 * time.Hour)}
	want.Enforcement = EnforceAdaptive
	want.RestartThreshold = 0.75
	want.MinCompletionProbability = 0.6
	want.Prices = map[string]ModelPrice{"claude-opus-4-8": {Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.5}}
	if !reflect.DeepEqual(cfg.Budget, want) {
		t.Errorf("budget = %+v\nwant %+v", cfg.Budget, want)
	}
	if got := strings.Join(src.Env, " "); got != "DEBUSSY_BUDGET_PHASE_TOKENS DEBUSSY_BUDGET_PLAN_COST_USD DEBUSSY_BUDGET_MIN_COMPLETION_PROBABILITY" {
		t.Errorf("env = %s", got)
	}
	// What YAML() prints loads back.
	writeFile(t, filepath.Join(root, FileName), cfg.YAML())
	if back, _, err := Load(root, "", nil); err != nil || !reflect.DeepEqual(back, cfg) {
		t.Errorf("round trip: %v\n got %+v", err, back.Budget)
	}

	tests := []struct {
		name string
		file string
		env  []string
		want []string
	}{
		{"unknown keys inside", "budget:\n  phase:\n    tokns: 5\n  enforcment: strict\n", nil, []string{
			"FILE:3:5: budget.phase.tokns: unknown key (did you mean tokens?); allowed: tokens, cost_usd, duration",
			"FILE:4:3: budget.enforcment: unknown key (did you mean enforcement?); allowed: phase, plan, enforcement, restart_threshold, min_completion_probability, max_extensions, prices",
		}},
		{"negative and mistyped", "budget:\n  phase: {tokens: -1, cost_usd: -2, duration: -5m}\n  plan: {tokens: 1.5, cost_usd: lots}\n  enforcement: strcit\n  max_extensions: -1\n", nil, []string{
			"FILE:2:19: budget.phase.tokens: -1 is negative; allowed: 0 (no limit) or a number of tokens > 0",
			"FILE:2:33: budget.phase.cost_usd: -2 is not a cost; allowed: 0 (no limit) or a cost in USD > 0",
			"FILE:2:47: budget.phase.duration: -5m is negative; allowed: 0 (no limit) or a Go duration > 0",
			"FILE:3:18: budget.plan.tokens: 1.5 is not an integer; allowed:",
			`FILE:3:33: budget.plan.cost_usd: "lots" is not a number; allowed:`,
			`FILE:4:16: budget.enforcement: "strcit" is not one of the allowed values; allowed: strict, advisory, soft, adaptive`,
			"FILE:5:19: budget.max_extensions: -1 is negative; allowed:",
		}},
		{"adaptive settings without adaptive", "budget:\n  restart_threshold: 0.8\n  min_completion_probability: 1.5\n", nil, []string{
			`FILE:2:22: budget.restart_threshold: 0.8 is set but enforcement is "strict", not adaptive; allowed: a fraction of the phase budget from 0 to 1 (default 0.9), only with enforcement: adaptive`,
			"FILE:3:31: budget.min_completion_probability: 1.5 is out of range; allowed:",
		}},
		{"block is not a mapping", "budget: 5\n", nil, []string{
			"FILE:1:9: budget: got 5, want a mapping; allowed: a mapping of phase, plan, enforcement,",
		}},
		{"bad price", "budget:\n  prices:\n    claude-x: {input: 0, output: 1}\n    claude-y: {input: 1, outptu: 1}\n", nil, []string{
			"FILE:4:",
		}},
		{"environment", "", []string{"DEBUSSY_BUDGET_PHASE_COST_USD=two", "DEBUSSY_BUDGET_ENFORCEMENT=hard"}, []string{
			`DEBUSSY_BUDGET_PHASE_COST_USD: "two" is not a number; allowed:`,
			`DEBUSSY_BUDGET_ENFORCEMENT: "hard" is not one of the allowed values; allowed: strict,`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, FileName)
			if tt.file != "" {
				writeFile(t, path, tt.file)
			}
			_, _, err := Load(root, "", tt.env)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if w = strings.ReplaceAll(w, "FILE", path); !strings.HasPrefix(lines[i], w) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, lines[i], w)
				}
			}
		})
	}

	// The zero-price entry is caught by Validate (decoding succeeded).
	c := Defaults()
	c.Budget.Prices = map[string]ModelPrice{"claude-x": {Output: 1}}
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), `budget.prices: price of "claude-x": input and output must be > 0`) {
		t.Errorf("zero input price: %v", err)
	}
}

// The file `debussy init` writes loads to the defaults, names every key
// (permission_mode set, with its meaning: what claude may do unasked is
// never a hidden default),
// and each commented line is the key's default; a key appended at its end
// (the first thing people do) never collides with one already set.
func TestInitFile(t *testing.T) {
	doc := string(InitFile())
	load := func(what, content string) Config {
		t.Helper()
		path := filepath.Join(t.TempDir(), ".debussy.yaml")
		writeFile(t, path, content)
		cfg, _, err := Load(t.TempDir(), path, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return cfg
	}
	if cfg := load("the init file", doc); !reflect.DeepEqual(cfg, Defaults()) {
		t.Errorf("the init file differs from Defaults():\n got %+v\nwant %+v", cfg, Defaults())
	}
	for _, key := range Keys() {
		top, _, _ := strings.Cut(key, ".")
		if !strings.Contains(doc, "\n# "+top+":") && !strings.Contains(doc, "\n"+top+":") {
			t.Errorf("the init file does not name %s", top)
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		kv, ok := strings.CutPrefix(line, "# ")
		key, _, isKey := strings.Cut(kv, ":")
		known := slices.ContainsFunc(Keys(), func(k string) bool { return strings.HasPrefix(k+".", key+".") })
		if !ok || !isKey || !known || key == "gate_commands" { // gate_commands shows an example
			continue
		}
		if cfg := load("uncommented "+key, kv+"\n"); !reflect.DeepEqual(cfg, Defaults()) {
			t.Errorf("%q is not %s's default", kv, key)
		}
	}
	for _, tt := range []struct {
		appended string
		check    func(Config) bool
	}{
		{"max_restarts: 5\n", func(c Config) bool { return c.MaxRestarts == 5 }},
		{"context_threshold: 70\n", func(c Config) bool { return c.ContextThreshold == 70 }},
		{"budget:\n  phase:\n    tokens: 1000\n", func(c Config) bool { return c.Budget.Phase.Tokens == 1000 }},
		{"gate_commands:\n  test: go test ./...\n", func(c Config) bool { return c.GateCommands["test"] == "go test ./..." }},
	} {
		if cfg := load("appended "+tt.appended, doc+tt.appended); !tt.check(cfg) {
			t.Errorf("appending %q did not take effect", tt.appended)
		}
	}
}

// A misspelt DEBUSSY_* variable gets the config file's "did you mean",
// not silence; debussy's own variables for the agent pass unnoticed.
func TestMisspeltEnvNoted(t *testing.T) {
	_, src, err := Load(t.TempDir(), "", []string{"DEBUSSY_CONTEXT_TRESHOLD=90", "DEBUSSY_RUN_ID=r1", "DEBUSSY_PHASE_ID=2", "DEBUSSY_TEST_CLAUDE=/x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Notes) != 1 || !strings.Contains(src.Notes[0], "DEBUSSY_CONTEXT_TRESHOLD") || !strings.Contains(src.Notes[0], "did you mean DEBUSSY_CONTEXT_THRESHOLD?") {
		t.Errorf("notes %q", src.Notes)
	}
}

// Every key in the example (what `debussy config example` prints) is
// explained: a comment block sits above it with nothing but keys between
// (no blank line: a key appended to the end of the file after a blank
// line, uncommented, fails), and that block is directly above it, names
// it, or explains its group (the key above shares its first word, or it is
// a nested key of a block).
func TestExampleExplainsEveryKey(t *testing.T) {
	doc := string(Example())
	lines := strings.Split(doc, "\n")
	lineOf := func(offset int) int { return strings.Count(doc[:offset], "\n") }
	firstWord := func(line string) string {
		k, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		w, _, _ := strings.Cut(k, "_")
		return w
	}
	at := 0
	for _, key := range Keys() {
		i := keyIndex(doc, key, at)
		if i < 0 {
			t.Errorf("the example does not set %s", key)
			continue
		}
		at = i + 1
		n := lineOf(i)
		if i > 0 {
			n++ // keyIndex points at the newline before the key
		}
		leaf := key[strings.LastIndex(key, ".")+1:]
		j := n - 1
		for j >= 0 && strings.TrimSpace(lines[j]) != "" && !strings.HasPrefix(strings.TrimSpace(lines[j]), "#") {
			j--
		}
		if j < 0 || !strings.HasPrefix(strings.TrimSpace(lines[j]), "#") {
			t.Errorf("%s (line %d): no comment above it explains it", key, n+1)
			continue
		}
		if j == n-1 {
			continue
		}
		var block []string
		for k := j; k >= 0 && strings.HasPrefix(strings.TrimSpace(lines[k]), "#"); k-- {
			block = append(block, lines[k])
		}
		above := lines[n-1]
		nested := strings.Contains(key, ".") && strings.HasSuffix(strings.TrimSpace(above), ":")
		if !strings.Contains(strings.Join(block, "\n"), leaf) && firstWord(above) != firstWord(lines[n]) && !nested &&
			len(lines[n])-len(strings.TrimLeft(lines[n], " ")) <= len(above)-len(strings.TrimLeft(above, " ")) {
			t.Errorf("%s (line %d): the comment above it neither names it nor explains its group", key, n+1)
		}
	}
}
