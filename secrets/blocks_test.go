package secrets

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// A block written line by line is judged whole at Flush; a unit that ends
// inside a block waits for its end.
func TestBlockWriter(t *testing.T) {
	body := []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"}
	var out bytes.Buffer
	b := NewBlockWriter(&out)
	for _, l := range []string{"  -----BEGIN ENCRYPTED PRIVATE KEY-----", "  " + body[0]} {
		b.Write([]byte(l + "\n"))
	}
	if err := b.Flush(); err != nil || out.Len() != 0 {
		t.Fatalf("an open block was written before its end: %q, %v", out.String(), err)
	}
	for _, l := range []string{"  " + body[1], "  -----END ENCRYPTED PRIVATE KEY-----", "done"} {
		b.Write([]byte(l + "\n"))
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Contains(got, body[0][:16]) || strings.Contains(got, body[1][:16]) || !strings.Contains(got, "done") {
		t.Errorf("block not redacted whole: %q", got)
	}
	// A tool result cut after its first lines: redacted to its own end,
	// and what follows it is shown.
	b.Write([]byte("    ⎿ -----BEGIN PRIVATE KEY-----\n    ⎿ " + body[0] + "\n    ⎿ …\n"))
	_ = b.Flush()
	b.Write([]byte("  next turn's text\n"))
	_ = b.Flush()
	if got := out.String(); strings.Contains(got, body[0][:16]) || !strings.Contains(got, "next turn's text") {
		t.Errorf("a cut block hid what follows or leaked: %q", got)
	}
	b.Write([]byte("-----BEGIN PRIVATE KEY-----\n" + body[0] + "\n"))
	if err := b.Close(); err != nil || strings.Contains(out.String(), body[0][:16]) {
		t.Errorf("Close left a block cut short unredacted: %q", out.String())
	}
}

// Value redacts every string a report reaches, each whole.
func TestValue(t *testing.T) {
	type gate struct{ Output string }
	type phase struct {
		Title  string
		Gates  []gate
		Notes  map[string]string
		Extra  map[string]any
		Last   *gate
		ByName map[string]gate // structs held by value, in a map
		Any    any             // and in an interface
		hidden string
	}
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----"
	p := &phase{Title: "deploy", Gates: []gate{{Output: "mysql -uroot -pS3cretPass!99 app"}},
		Notes: map[string]string{"n": "SMTP_PASS=Xy7-pQ2rT9"}, Extra: map[string]any{"k": key, "n": 3},
		Last:   &gate{Output: "Cookie: sessionid=" + strings.Repeat("a1b2c3", 6)},
		ByName: map[string]gate{"lint": {Output: "SMTP_PASS=Xy7-pQ2rT9"}}, Any: gate{Output: "SMTP_PASS=Xy7-pQ2rT9"},
		hidden: "API_KEY=abc123def456ghi"}
	Default().Value(p)
	for _, s := range []string{p.Gates[0].Output, p.Notes["n"], p.Extra["k"].(string), p.Last.Output, p.ByName["lint"].Output, p.Any.(gate).Output} {
		if !strings.Contains(s, Redacted) {
			t.Errorf("not redacted: %q", s)
		}
	}
	if p.Title != "deploy" || p.Extra["n"] != 3 || p.hidden != "API_KEY=abc123def456ghi" {
		t.Errorf("Value changed what it should not: %+v", p)
	}
}

// Over a Writer (debussy's terminal), a BlockWriter writes beneath it: the
// unit it has redacted whole is not redacted again, and a JSON unit comes
// out as the Writer would write it.
func TestBlockWriterOverWriter(t *testing.T) {
	var out bytes.Buffer
	b := NewBlockWriter(Writer(&out))
	if b.w != io.Writer(&out) {
		t.Fatalf("BlockWriter writes to %T, not to the buffer beneath the Writer", b.w)
	}
	if f := NewBlockWriter(Writer(os.Stdout)); f.w != io.Writer(os.Stdout) {
		t.Errorf("BlockWriter writes to %T, not to the file beneath the Writer", f.w)
	}
	unit := "  {\n    \"password\": \"9724248055565213:Aso1r3cmt530vtt_unu_2qxmm9mk3bsjudy\"\n  }\n"
	var want bytes.Buffer
	_, _ = Writer(&want).Write([]byte(Default().String(unit)))
	b.Write([]byte(unit))
	if err := b.Close(); err != nil || out.String() != want.String() {
		t.Errorf("JSON unit:\n got %q, %v\nwant %q", out.String(), err, want.String())
	}
}
