package gitcommit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfigMatchesGit parses config files with parseConfig and with
// `git config --file F --list`; the variables, values and refusals must
// agree.
func TestParseConfigMatchesGit(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"plain", "[user]\n\tname = A B\n\temail = a@b\n"},
		{"BOM", "\xef\xbb\xbf[core]\n\tbare = false\n"},
		{"legacy subsection", "[remote.Origin]\n\turl = x\n[Branch.Main]\n\tremote = origin\n"},
		{"quoted subsection keeps case and escapes", "[filter \"LFS\"]\n\tclean = git-lfs clean -- %f\n[a \"x\\\"y\\\\z\"]\n\tk = v\n"},
		{"bare and empty values", "[core]\n\tfileMode\n\tautocrlf =\n"},
		{"comments and inner spaces", "# c\n; c\n[user] ; c\n\tname =   spaced   out   # comment\n"},
		{"quotes and escapes", "[x]\n\ta = \"  keep  \" ; c\n\tb = tab\\there\n\tc = \"semi;colon\"\n\td = back\\\\slash\n"},
		{"continuation", "[x]\n\ta = one \\\ntwo\n"},
		{"CRLF", "[x]\r\n\ta = b\r\n"},
		{"case folding", "[CoRe]\n\tExcludesFile = ~/x\n"},
		{"dashes and digits", "[x-1]\n\tk-2 = v\n"},
		{"no final newline", "[x]\n\ta = b"},
		{"key before any section", "a = b\n[x]\n\tc = d\n"},
		{"bad: unknown escape", "[x]\n\ta = \\q\n"},
		{"bad: unclosed quote", "[x]\n\ta = \"b\n"},
		{"bad: space in key", "[x]\n\tbad key = 1\n"},
		{"bad: unclosed section", "[x\n\ta = b\n"},
		{"bad: garbage after key", "[x]\n\ta # c\n"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(dir, "config"+itoa3(i))
			must(t, os.WriteFile(f, []byte(tt.in), 0o644))
			cmd := exec.Command("git", "config", "--file", f, "--list")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
			out, gitErr := cmd.Output()
			var got []string
			err := parseConfig([]byte(tt.in), func(key, value string, bare bool) {
				if bare {
					got = append(got, key)
				} else {
					got = append(got, key+"="+value)
				}
			})
			if (err != nil) != (gitErr != nil) {
				t.Fatalf("parseConfig err = %v; git: %v", err, gitErr)
			}
			if err != nil {
				return
			}
			if g, w := strings.Join(got, "\n"), strings.TrimSuffix(string(out), "\n"); g != w {
				t.Errorf("parseConfig:\n%s\ngit config --list:\n%s", g, w)
			}
		})
	}
}

func itoa3(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }
