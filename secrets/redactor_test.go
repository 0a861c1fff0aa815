package secrets

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	r := Default()
	tests := []struct{ name, in, want string }{
		{"nothing", `{"a":"b","n":1}`, `{"a":"b","n":1}`},
		{"value under a secret key", `{"password":"hunter2x","user":"bob"}`, `{"password":"[redacted]","user":"bob"}`},
		{"token in text", `{"text":"export API_KEY=abc123def456"}`, `{"text":"export API_KEY=[redacted]"}`},
		{"escaped quote in a value", `{"text":"pw \"x\" API_KEY=abc123def456"}`, `{"text":"pw \"x\" API_KEY=[redacted]"}`},
		{"pem with escaped newlines", `{"out":"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----\nok"}`, `{"out":"[redacted]\nok"}`},
		{"json lines", "{\"a\":\"postgres://u:s3cretpw@db/x\"}\n{\"b\":1}\n", "{\"a\":\"postgres://u:[redacted]@db/x\"}\n{\"b\":1}\n"},
		{"key itself kept", `{"api_key":""}`, `{"api_key":""}`},
		{"value under a secret key, a token in it", `{"password":"hunter2x and sk-ant-api03-abcdefghijklmnopqrst"}`, `{"password":"[redacted]"}`},
		{"value under another key, a token in it", `{"api_version":"v2 sk-ant-api03-abcdefghijklmnopqrst"}`, `{"api_version":"v2 [redacted]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(r.JSON([]byte(tt.in)))
			if got != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !json.Valid([]byte(line)) {
					t.Errorf("result is not valid JSON: %s", line)
				}
			}
		})
	}
}

// Every corpus shape, as a JSON string value, goes; the document stays JSON.
func TestJSONCorpus(t *testing.T) {
	for _, c := range secretCorpus() {
		doc, _ := json.Marshal(map[string]any{"event": "tool", "output": c.text})
		got := Default().JSON(doc)
		if !json.Valid(got) {
			t.Errorf("%s: result is not valid JSON: %s", c.family, got)
		}
		var back map[string]string
		_ = json.Unmarshal(got, &back)
		if leaked(back["output"], c.secret) {
			t.Errorf("%s: secret survives in JSON: %s", c.family, got)
		}
	}
}

func TestAllow(t *testing.T) {
	const in = "API_KEY=test123abc456 TOKEN=sk-test-abcdefghijklmnopqrstu other=ghp_0123456789abcdefghijABCDEFGHIJ012345"
	r, err := New([]string{"test123abc456", "/^sk-test-[a-z]+$/"})
	if err != nil {
		t.Fatal(err)
	}
	want := "API_KEY=test123abc456 TOKEN=sk-test-abcdefghijklmnopqrstu other=[redacted]"
	if got := r.String(in); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := New([]string{"/[/"}); err == nil {
		t.Error("a bad regexp is accepted")
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := Writer(&buf)
	n, err := w.Write([]byte("login with PGPASSWORD=s3cretPw9 now\n"))
	if err != nil || n != len("login with PGPASSWORD=s3cretPw9 now\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if _, err := w.Write([]byte(`{"level":"info","msg":"x","password":"hunter2x"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	want := "login with PGPASSWORD=[redacted] now\n" + `{"level":"info","msg":"x","password":"[redacted]"}` + "\n"
	if buf.String() != want {
		t.Errorf("got  %q\nwant %q", buf.String(), want)
	}
}

func TestBudget(t *testing.T) {
	in := strings.Repeat("a", Budget+10)
	got := Default().String(in)
	if !strings.HasSuffix(got, "[redacted: 10 bytes beyond the redaction budget]") || len(got) > Budget+100 {
		t.Errorf("over-budget text not cut: len %d, tail %q", len(got), got[len(got)-60:])
	}
}

func TestIdempotent(t *testing.T) {
	named, heldOut := familyCorpus()
	for _, c := range append(append(secretCorpus(), named...), heldOut...) {
		once := Default().String(c.text)
		if twice := Default().String(once); twice != once {
			t.Errorf("%s: not idempotent:\n%q\n%q", c.family, once, twice)
		}
	}
}

// redact_deny: a literal or a /regexp/ is redacted wherever it occurs,
// even where no rule would and where redact_allow keeps it.
func TestDeny(t *testing.T) {
	r, err := NewWithDeny([]string{"keepme-123"}, []string{"corp-internal-42", "/\\bACME-[0-9]{6}\\b/", "keepme-123"})
	if err != nil {
		t.Fatal(err)
	}
	in := "build corp-internal-42 for ACME-123456 (ACME-12 stays), keepme-123; twice: corp-internal-42"
	want := "build [redacted] for [redacted] (ACME-12 stays), [redacted]; twice: [redacted]"
	if got := r.String(in); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(r.JSON([]byte(`{"note":"corp-internal-42"}`))); got != `{"note":"[redacted]"}` {
		t.Errorf("JSON: %s", got)
	}
	for _, bad := range []string{"", "/[/", "/a*/"} {
		if _, err := NewWithDeny(nil, []string{bad}); err == nil {
			t.Errorf("deny entry %q accepted", bad)
		}
	}
}
