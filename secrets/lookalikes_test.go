package secrets

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookAlikeFiles: what agents' tools really print (test runners,
// compilers, linters, stack traces, code, manifests that reference
// secrets, public keys and ids) comes back byte for byte. Each file is
// redacted whole, as a gate's output is; a failure lists the lines changed.
func TestLookAlikeFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/lookalikes/*")
	if err != nil || len(files) < 10 {
		t.Fatalf("look-alike files: %v, %d found", err, len(files))
	}
	r := Default()
	lines, changed := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in := string(b)
		lines += strings.Count(in, "\n")
		// A JSON line (a stream event, an API response) as debussy's
		// events hold it: value by value.
		for i, l := range strings.Split(in, "\n") {
			if json.Valid([]byte(l)) && strings.HasPrefix(l, "{") {
				if got := string(r.JSON([]byte(l))); got != l {
					changed++
					t.Errorf("%s:%d changed as JSON:\n in: %s\nout: %s", filepath.Base(f), i+1, l, got)
				}
			}
		}
		got := r.String(in)
		if got == in {
			continue
		}
		inL, gotL := strings.Split(in, "\n"), strings.Split(got, "\n")
		for i := range inL {
			if i >= len(gotL) || gotL[i] != inL[i] {
				changed++
				g := ""
				if i < len(gotL) {
					g = gotL[i]
				}
				t.Errorf("%s:%d changed by %v:\n in: %q\nout: %q", filepath.Base(f), i+1, firing(r, inL[i]), inL[i], g)
				if len(inL) != len(gotL) {
					break // a block swallowed lines: the rest is shifted
				}
			}
		}
	}
	t.Logf("look-alike files: %d files, %d lines, %d changed", len(files), lines, changed)
}
