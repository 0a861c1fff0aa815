package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/fuzzguard"
)

// FuzzLoad: any .debussy.yaml and DEBUSSY_* value load without a panic;
// a rejected one wraps ErrInvalid and every problem says where it came
// from: file:line:column, or the environment variable.
func FuzzLoad(f *testing.F) {
	f.Add(string(Example()), uint8(0), "opus")
	if data, err := os.ReadFile("testdata/config.golden.yaml"); err == nil {
		f.Add(string(data), uint8(3), "70")
	}
	f.Add("model: x\ncontxt_threshold: 70\n", uint8(5), "-1")
	f.Add("gate_commands:\n  lint: \"\"\nextra_args:\n  - -p\nredact_allow: [\"/[/\"]\n", uint8(30), "[a, b]")
	f.Add("budget:\n  phase:\n    tokens: 1e99\n  prices: {x: {input: -1}}\n", uint8(40), "{test: go test}")
	f.Add("model: x\n  context_threshold: 70\n", uint8(9), "90s")
	keys := Keys()
	// A red threshold set below its default yellow one: the problem has the
	// environment variable's place, not the default's (none).
	f.Add("", uint8(slices.Index(keys, "zone_delegations_red")), "1")
	f.Fuzz(func(t *testing.T, yml string, key uint8, value string) {
		fuzzguard.Within(t, func() {
			root := t.TempDir()
			path := filepath.Join(root, ".debussy.yaml")
			if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
				t.Fatal(err)
			}
			envVar := EnvVar(keys[int(key)%len(keys)])
			_, _, err := Load(root, "", []string{envVar + "=" + value})
			if err == nil {
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			problems := []error{err}
			if _, whole := err.(*invalidError); !whole {
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					problems = j.Unwrap() // errors.Join of FieldErrors
				}
			}
			for _, p := range problems {
				var fe *FieldError
				switch {
				case errors.As(p, &fe):
					if fe.File == "" && fe.EnvVar == "" {
						t.Errorf("problem without a place: %v", p)
					}
					if fe.File != "" && fe.Line < 1 {
						t.Errorf("problem in the file without a line: %v", p)
					}
				case !strings.HasPrefix(p.Error(), path) && !strings.HasPrefix(p.Error(), "read config"):
					t.Errorf("problem does not start with the file: %v", p)
				}
			}
		})
	})
}
