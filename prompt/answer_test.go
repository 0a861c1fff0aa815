package prompt

import (
	"strings"
	"testing"
)

func TestAnswered(t *testing.T) {
	const secret = "ghp_Zq8LmN3xT5vB7kR2wY4pA6sD9fG1hJ0cE2uI"
	got := Answered("2", "needs the staging key", "use this token: "+secret+"\nand the vault path secret/staging", "BASE PROMPT")
	for _, want := range []string{"phase 2", "> needs the staging key", "> use this token:", "> and the vault path secret/staging",
		"debussy done --phase 2 --status blocked", "---\n\nBASE PROMPT"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, secret) {
		t.Errorf("the answer's secret reached the prompt:\n%s", got)
	}
}
