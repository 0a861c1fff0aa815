package checkpoint

import "testing"

func TestRedact(t *testing.T) {
	const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabcdef==\n-----END RSA PRIVATE KEY-----"
	tests := []struct {
		name, in, want string
	}{
		// Secrets on their own.
		{"anthropic key", "the key is sk-ant-api03-SECRETSECRETSECRET.", "the key is [redacted]."},
		{"openai project key", "sk-proj-abcdefghijklmnopqrstuv", "[redacted]"},
		{"github token", "token ghp_0123456789abcdefghijABCDEFGHIJ012345 used", "token [redacted] used"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefmnopqrstuvw", "[redacted]"},
		{"github app token", "ghs_9fK2mQ7xLp4Rt8Vw1Zc6Hn3Bd5", "[redacted]"},
		{"aws key id", "aws id AKIAIOSFODNN7EXAMPLE here", "aws id [redacted] here"},
		{"slack", "xoxb-123456789012-abcdefABCDEF", "[redacted]"},
		{"bearer", "curl -H 'Authorization: Bearer abcdef0123456789abcdef'", "curl -H 'Authorization: Bearer [redacted]'"},
		{"pem block", "key:\n" + pem + "\nafter", "key:\n[redacted]\nafter"},
		{"pem block cut short", "out: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk…", "out: [redacted]"},
		{"pem block whose start was cut off", "…KEY-----\nMIIEpAIBAAKCAQEA7\nabcdef==\n-----END RSA PRIVATE KEY-----\nok", "[redacted]\nok"},
		// Named values: the name stays.
		{"env", "export OPENAI_API_KEY=abc123xyz && run", "export OPENAI_API_KEY=[redacted] && run"},
		{"env holding a key", "OPENAI_API_KEY=sk-ant-api03-SECRETSECRETSECRET", "OPENAI_API_KEY=[redacted]"},
		{"lower case", "api_token=hunter2hunter2", "api_token=[redacted]"},
		{"flag", "tool --api-key=abc123 --verbose", "tool --api-key=[redacted] --verbose"},
		{"yaml", "db_password: s3cr3t\nuser: bob", "db_password: [redacted]\nuser: bob"},
		{"header", "X-Api-Key: 0123abcd", "X-Api-Key: [redacted]"},
		{"json", `{"client_secret": "abc\"def", "id": 7}`, `{"client_secret": "[redacted]", "id": 7}`},
		{"json compact", `{"accessToken":"xyz123"}`, `{"accessToken":"[redacted]"}`},
		{"quoted assignment", `SECRET_KEY = "django-insecure-xyz"`, `SECRET_KEY = "[redacted]"`},
		{"single quoted", `password='p a s s'`, `password='[redacted]'`},
		// A bare "key" in a name takes only a value that looks generated.
		{"monkey", "monkey=banana", "monkey=banana"},
		{"keyboard with a value", "KEYBOARD=us", "KEYBOARD=us"},
		{"key with a generated value", "license_key=Q3x9Lk2mP8rT", "license_key=[redacted]"},
		// Not secrets.
		{"skip", "skip-this and disk-usage", "skip-this and disk-usage"},
		{"short sk", "pip install sk-learn", "pip install sk-learn"},
		{"prose", "the API key is in the vault; rotate the token weekly", "the API key is in the vault; rotate the token weekly"},
		{"keyboard without a value", "the KEYBOARD layout", "the KEYBOARD layout"},
		{"go short assignment", "token := lexer.Next()", "token := lexer.Next()"},
		{"comparison", "if key == nil {", "if key == nil {"},
		{"empty value", "API_KEY= next", "API_KEY= next"},
		{"short AKIA", "AKIA1234", "AKIA1234"},
		{"short ghp", "ghp_abc", "ghp_abc"},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"already redacted", "API_KEY=[redacted] and [redacted]", "API_KEY=[redacted] and [redacted]"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent: %q → %q", got, again)
			}
		})
	}
}
