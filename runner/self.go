package runner

import (
	"os"
	"path/filepath"
	"strings"
)

// SelfProgram is the test of a command's program (its first word, as
// typed) against debussy's own executable self, resolved as the agent's
// shell resolves it: a bare name on the PATH claude gets (PathPrepend
// first; a relative entry below Dir), an absolute path as it is. Only
// the same file passes (os.SameFile), whatever its name: a file merely
// named debussy (`./tools/debussy`, a `bin/debussy` build output) runs
// whatever it holds, so it never borrows debussy's allowance. A relative
// path with a slash never passes. It answers false for everything when
// self cannot be read.
func SelfProgram(spec Spec, self string) func(program string) bool {
	me, err := os.Stat(self)
	if self == "" || err != nil {
		return func(string) bool { return false }
	}
	path := ""
	for _, kv := range childEnv(spec) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	same := func(file string) bool {
		fi, err := os.Stat(file)
		return err == nil && fi.Mode().IsRegular() && os.SameFile(me, fi)
	}
	return func(program string) bool {
		switch {
		case filepath.IsAbs(program):
			return same(program)
		case strings.ContainsRune(program, '/'):
			return false
		}
		// The first executable of that name on the PATH is what runs.
		for _, dir := range filepath.SplitList(path) {
			if dir == "" {
				dir = "."
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(spec.Dir, dir)
			}
			file := filepath.Join(dir, program)
			if fi, err := os.Stat(file); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return same(file)
			}
		}
		return false
	}
}
