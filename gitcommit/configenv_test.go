package gitcommit

import (
	"os/exec"
	"strings"
	"testing"
)

// GIT_CONFIG_PARAMETERS as git itself reads it: `git config --list` with
// only that variable set is the oracle for the keys and values, and for
// which strings are refused.
func TestConfigParametersLikeGit(t *testing.T) {
	t.Parallel()
	env := diffEnv(t.TempDir(), nil)
	for _, in := range []string{
		`'core.excludesfile'='~/x'`,
		`'core.excludesFile'='a b' 'user.name'='It'\''s me'`,
		`'core.fileMode'`,
		`'core.fileMode'=`,
		`'core.excludesfile=old style' 'Sect.Sub.Key=v=w'`,
		`  'a.b'='1'   'a.c'='2'  `,
		`'a.b'='x'\!'y'`,
		`'a.b'='1''a.c'='2'`,
		`'a.b'=1`,
		`a.b=1`,
		`'a.b`,
		`'=x'`,
		`'a.b'='1'x`,
	} {
		cmd := exec.Command("git", "config", "--list", "--show-scope")
		cmd.Env = append(env, "GIT_CONFIG_PARAMETERS="+in)
		out, gitErr := cmd.Output()
		var want []string
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "command\t"); ok {
				want = append(want, rest)
			}
		}
		keys, values, err := configParameters(in)
		if (err != nil) != (gitErr != nil) {
			t.Errorf("%s: err = %v, git: %v", in, err, gitErr)
			continue
		}
		var got []string
		for i, k := range keys {
			if values[i] == nil {
				got = append(got, k) // git --list prints a bare key alone
			} else {
				got = append(got, k+"="+*values[i])
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", in, got, want)
		}
	}
}
