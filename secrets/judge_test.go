package secrets

import (
	"strings"
	"testing"
)

func TestSecretLabel(t *testing.T) {
	for _, tt := range []struct {
		label string
		want  bool
	}{
		{"Enter the password to proceed", true},
		{"AWS Secret Access Key [None]", true},
		{"Password (leave blank to generate one)", true},
		{"Client secret value (shown once)", true},
		{"Incorrect API key provided", true},
		{"Unseal Key 1", true},
		{"SecretID", true},
		{"TLSPSKValue", true},
		{"Пароль администратора", true},
		{"ПАРОЛЬ", true},
		{"ŞİFRE", true},
		{"API-Schlüssel", true},
		{"Zugangsschlüssel des Dienstkontos", true},
		{"访问令牌", true},
		{"Key fingerprint (SHA256)", false},
		{"Password policy (since v2)", false},
		{"Token lifetime (default)", false},
		{"Signing key ID for releases", false},
		{"public key", false},
		{"pub token", false},
		{"PasswordAuthentication", false},
		{"AuthorizedKeysFile", false},
		{"key_mgmt", false},
		{"Compiling", false},
	} {
		if _, got := secretLabel(tt.label); got != tt.want {
			t.Errorf("secretLabel(%q) = %v, want %v", tt.label, got, tt.want)
		}
	}
}

func TestNaturalText(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want bool
	}{
		{"Passwort", true}, {"Mot de passe", true}, {"API-Schlüssel", true}, {"Contraseña", true}, {"configurada", true},
		{"ACTIVE", true}, {"Ihre Sitzung ist abgelaufen.", true}, {"Пароль", true},
		{"django-insecure-xyz", false}, {"hunter2", false}, {"AbCdEfGhIj", false}, {"Tr0ub4dor&3", false}, {"xkcdqwrt", false},
	} {
		if got := naturalText(tt.v); got != tt.want {
			t.Errorf("naturalText(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// A token the CLI streamed in two text blocks of one message is judged
// whole: neither piece survives, and the blocks keep their separator.
func TestJoined(t *testing.T) {
	tok := "ghp_" + "Zt4Hw8NcY1bELm3Pq6Rs0Vu2Jd5Kf1Gh8Wy4"
	parts := []string{"The token is " + tok[:14], tok[14:] + " and it works."}
	if got := Default().String(strings.Join(parts, "\n\n")); !strings.Contains(got, tok[14:]) {
		t.Fatalf("the pieces alone are caught already (%q): the test shows nothing", got)
	}
	got := Joined(parts, "\n\n")
	if strings.Contains(got, tok[:14]) || strings.Contains(got, tok[14:]) || !strings.Contains(got, "\n\n") || !strings.Contains(got, "and it works.") {
		t.Errorf("Joined = %q", got)
	}
	// Words across a join are not a token.
	if got := Joined([]string{"first line", "second line"}, "\n"); got != "first line\nsecond line" {
		t.Errorf("Joined changed plain text: %q", got)
	}
}
