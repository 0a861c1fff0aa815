package public

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/ptytest"
)

const planted = "ghp_notreal Qx7vT2mLp9Rk"

func TestValue(t *testing.T) {
	tests := []struct {
		name, key string
		v         any
		want      any
	}{
		{"a number passes", "input", 42, 42},
		{"a duration passes", "took", 3 * time.Second, 3 * time.Second},
		{"a name passes", "name", "Bash", "Bash"},
		{"structure is one bounded line", "reason", "a\nb", "a b"},
		{"free text is its size", "input", planted, Withheld(len(planted))},
		{"an unknown key is free text", "note_to_self", planted, Withheld(len(planted))},
		{"empty text is nothing", "error", "", ""},
		{"own words pass", "problem", Own("gate 1 failed"), "gate 1 failed"},
		{"words show their public form", "why", Words("crashed (exit code 137)", "crashed: "+planted), "crashed (exit code 137)"},
		{"paths pass", "files", []string{"a.go", "b/c.go"}, []string{"a.go", "b/c.go"}},
		{"a list of text is its size", "args", []string{planted}, Withheld(len(planted))},
		{"an error is its size", "err", errors.New("gate said " + planted), "[error text withheld: 34 bytes]"},
		{"an error's public form", "err", fmt.Errorf("run: %w", OwnErr(errors.New("config: bad key"))), "config: bad key"},
		{"a file error names its path", "err", fmt.Errorf("save: %w", &fs.PathError{Op: "open", Path: ".debussy/x", Err: fs.ErrPermission}), "open .debussy/x: permission denied"},
		{"a struct under a free key", "fields", struct{ A string }{planted}, Withheld(len(`{"A":"` + planted + `"}`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Value(tt.key, tt.v); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Value(%q, %v) = %v, want %v", tt.key, tt.v, got, tt.want)
			}
		})
	}
}

func TestJSONLine(t *testing.T) {
	in := `{"ts":"2026-01-01T00:00:00Z","event":"gate","phase":"2","gate":"check","exit_code":1,"duration_ms":12,` +
		`"output_tail":"FAIL ` + planted + `","categories":[{"name":"System tools","tokens":14000}],"nested":{"x":"` + planted + `"}}`
	got := string(JSONLine([]byte(in)))
	if strings.Contains(got, "Qx7vT2mLp9Rk") {
		t.Errorf("planted text survives: %s", got)
	}
	for _, want := range []string{`{"ts":"2026-01-01T00:00:00Z","event":"gate",`, `"exit_code":1`, `"gate":"check"`, `"name":"System tools"`, `"tokens":14000`, `"output_tail":"[text withheld: 29 bytes]"`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	if got := string(JSONLine([]byte("not json " + planted))); strings.Contains(got, "Qx7v") {
		t.Errorf("a line that is not JSON survives: %s", got)
	}
}

// The handler is the log's one rule: structure only unless text is on,
// for attributes given at the call, through With, and in groups.
func TestHandler(t *testing.T) {
	for _, text := range []bool{false, true} {
		var buf bytes.Buffer
		l := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), text)).With("input", planted)
		l.Info("tool", "name", "Bash", slog.Group("g", "output", planted, "exit", "ok"), "why", Words("crashed", "crashed: "+planted))
		out := buf.String()
		if strings.Contains(out, "Qx7vT2mLp9Rk") != text {
			t.Errorf("text %v: %s", text, out)
		}
		if !strings.Contains(out, "name=Bash") || !strings.Contains(out, "g.exit=ok") || !text && !strings.HasSuffix(strings.TrimSpace(out), "why=crashed") {
			t.Errorf("text %v: structure lost: %s", text, out)
		}
	}
}

// Text is shown on a terminal outside CI, or when asked for; a pipe, a
// file and any CI=true job get structure.
func TestTextShown(t *testing.T) {
	_, tty := ptytest.Open(t)
	pipe := &bytes.Buffer{}
	env := func(ci string) func(string) string {
		return func(k string) string {
			if k == "CI" {
				return ci
			}
			return ""
		}
	}
	for _, tt := range []struct {
		name  string
		w     any
		ci    string
		asked bool
		want  bool
	}{
		{"a terminal", tty, "", false, true},
		{"a terminal in CI", tty, "true", false, false},
		{"a terminal in CI=1", tty, "1", false, false},
		{"a terminal in CI=True", tty, "True", false, false},
		{"a terminal, CI=false", tty, "false", false, true},
		{"a pipe", pipe, "", false, false},
		{"a pipe, asked", pipe, "true", true, true},
	} {
		if got := TextShown(tt.w, env(tt.ci), tt.asked); got != tt.want {
			t.Errorf("%s: TextShown = %v, want %v", tt.name, got, tt.want)
		}
	}
}
