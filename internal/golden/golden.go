// Package golden compares test output with files under testdata; run the
// tests with -update to rewrite the files, then review the diff.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Update reports whether the tests run with -update.
func Update() bool { return *update }

// Check compares got with the file at path, or writes it there with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s at %s (go test -update rewrites it; review the diff):\n%s", path, firstDiff(string(got), string(want)), got)
	}
}

// Same fails t when got differs from want, naming the first line that
// differs; what says which text it is.
func Same(t testing.TB, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s differs at %s (go test -update rewrites it)", what, firstDiff(got, want))
	}
}

// firstDiff is the first line where got and want differ, both shown.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\ngot  %s\nwant %s", i+1, gl, wl)
		}
	}
	return "the end"
}
