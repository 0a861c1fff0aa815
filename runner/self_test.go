package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// Only debussy's own executable passes, found as the agent's shell finds
// it; a file merely named debussy, wherever it is, does not.
func TestSelfProgram(t *testing.T) {
	root := t.TempDir()
	selfDir := filepath.Join(root, "install")
	self := filepath.Join(selfDir, "debussy")
	repo := filepath.Join(root, "repo")
	other := filepath.Join(repo, "tools", "debussy")
	link := filepath.Join(root, "link", "debussy")
	for _, f := range []string{self, other} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string // the user's PATH
		prepend  string // debussy's own directory, put first
		program  string
		selfPath string
		want     bool
	}{
		{name: "bare name on debussy's PATH", prepend: selfDir, program: "debussy", want: true},
		{name: "its absolute path", program: self, want: true},
		{name: "a symlink to it", program: link, want: true},
		{name: "a relative path to a file named debussy", prepend: selfDir, program: "./tools/debussy"},
		{name: "a relative path to debussy itself", prepend: selfDir, program: "../install/debussy"},
		{name: "another file's absolute path", prepend: selfDir, program: other},
		{name: "bare name resolving to another file first", path: filepath.Join(repo, "tools"), program: "debussy"},
		{name: "a relative PATH entry resolves below the work tree", path: "tools", program: "debussy"},
		{name: "not on the PATH at all", path: "/nonexistent", program: "debussy"},
		{name: "self unknown", prepend: selfDir, program: "debussy", selfPath: "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Dir: repo, Env: []string{"PATH=" + tt.path}, PathPrepend: tt.prepend}
			s := self
			if tt.selfPath == "-" {
				s = ""
			}
			if got := SelfProgram(spec, s)(tt.program); got != tt.want {
				t.Errorf("SelfProgram(%q) = %v, want %v", tt.program, got, tt.want)
			}
		})
	}
}
