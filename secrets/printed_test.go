package secrets

import (
	"strings"
	"testing"
)

// The "a command printed a credential" rule's cat and echo branches could
// never match: the expression ended them with [ \t]*$ without (?m), so the
// value on the next line was never reached (issue 53). Each row leaked
// before the fix.
func TestPrintedByCatAndEcho(t *testing.T) {
	r := Default()
	for _, tt := range []struct{ name, text, secret string }{
		{"cat a token file", "$ cat ~/.config/acme/deploy.token\nq7Zt2LmN4vR8xK\n$ ls", "q7Zt2LmN4vR8xK"},
		{"cat a secret file, no prompt", "cat /run/secrets/db_password\nHt4kL9pQ2w\n", "Ht4kL9pQ2w"},
		{"echo a secret variable", "$ echo \"$DEPLOY_SECRET\"\nNb3Xc7Vz5Mq9\n$ echo done", "Nb3Xc7Vz5Mq9"},
		{"echo a token variable in braces", "$ echo ${API_TOKEN}\nW9pLm2Qx7Rk4Zt\n", "W9pLm2Qx7Rk4Zt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.String(tt.text); strings.Contains(got, tt.secret) {
				t.Errorf("the printed secret survives:\n in: %q\nout: %q", tt.text, got)
			}
		})
	}
	// What the same commands print that is not a secret stays.
	for _, text := range []string{
		"$ cat internal/token/token.go\npackage token",
		"$ echo $KEY_ID\n3AA5C34371567BD2",
		"$ cat README.md\n# acme-cli",
		"$ echo \"$TOKEN_FILE\"\n/run/secrets/deploy-token",
	} {
		if got := r.String(text); got != text {
			t.Errorf("changed:\n in: %q\nout: %q", text, got)
		}
	}
}
