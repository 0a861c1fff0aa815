package secrets

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
)

// JSON redacts the string values of a JSON document (or JSON lines) and
// keeps it valid: each string is decoded, redacted and encoded again, and a
// value under a secret-looking key ("password": "…") is redacted whole.
// Text that is not JSON is redacted as text.
func (r *Redactor) JSON(b []byte) []byte {
	if !json.Valid(b) && !validLines(b) {
		return []byte(r.String(string(b)))
	}
	// Each string on its own: escapes (\" \n) hide shapes from the text
	// rules in the encoded form.
	var out bytes.Buffer
	out.Grow(len(b))
	pos := 0
	key := ""    // the key whose value comes next, if any
	keyEnd := -1 // where the bytes after that key's colon start
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := stringEnd(b, i)
		lit := b[i : j+1]
		var s string
		if json.Unmarshal(lit, &s) != nil {
			i = j
			continue
		}
		next := skipSpace(b, j+1)
		isKey := next < len(b) && b[next] == ':'
		red := s
		if len(s) >= 8 || len(r.denyLits)+len(r.denyREs) > 0 { // shorter, only a name or redact_deny makes it a secret
			red = r.String(s)
		}
		if !isKey && keyEnd >= 0 && len(bytes.TrimSpace(b[keyEnd:i])) == 0 && secretKey(key) {
			// The value with its key, as the text rules see it:
			// "password": "hunter2". A value redacted in part already (a
			// password with a token in it) goes whole if its name says
			// so, as it does in text.
			pair := `"` + key + `": ` + string(lit)
			if got := r.String(pair); red == s && got != pair || got == `"`+key+`": "`+Redacted+`"` {
				red = Redacted
			}
		}
		keyEnd = -1
		if isKey {
			key, keyEnd = s, next+1
		}
		if red != s {
			enc, _ := json.Marshal(red)
			out.Write(b[pos:i])
			out.Write(enc)
			pos = j + 1
		}
		i = j
	}
	out.Write(b[pos:])
	return out.Bytes()
}

// stringEnd is the index of the quote closing the string opened at i (or
// the last byte, for a string cut short).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(b) - 1
}

// secretKey: a key whose value the text rules may take for a secret.
func secretKey(key string) bool {
	k := asciiLower(key)
	for _, w := range append(append(lowerWords(), foreignKeywords...), "api", "access") {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func validLines(b []byte) bool {
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if !json.Valid(line) {
			return false
		}
	}
	return true
}

// Writer redacts everything written to w with the Default redactor at
// the time of each Write: debussy's terminal output (logs, summaries,
// errors) goes through it. A secret split across two Writes is not seen;
// debussy writes whole lines. Over a file (a terminal) the writer keeps
// Fd and Read, so terminal and colour detection still see the terminal.
func Writer(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		return fileWriter{redactingWriter{w}, f}
	}
	return redactingWriter{w}
}

type redactingWriter struct{ w io.Writer }

func (rw redactingWriter) Write(p []byte) (int, error) {
	var red []byte
	if jsonLine(p) {
		red = Default().JSON(p) // a JSON log line stays JSON
	} else {
		red = []byte(Default().String(string(p)))
	}
	if bytes.Equal(red, p) {
		return rw.w.Write(p)
	}
	if _, err := rw.w.Write(red); err != nil {
		return 0, err
	}
	return len(p), nil
}

// jsonLine reports whether Writer takes p for a JSON log line.
func jsonLine(p []byte) bool {
	t := bytes.TrimSpace(p)
	return len(t) > 0 && t[0] == '{'
}

// beneath is the writer a Writer redacts for, or w itself.
func beneath(w io.Writer) io.Writer {
	switch rw := w.(type) {
	case redactingWriter:
		return rw.w
	case fileWriter:
		return rw.w
	}
	return w
}

type fileWriter struct {
	redactingWriter
	f *os.File
}

func (fw fileWriter) Fd() uintptr                { return fw.f.Fd() }
func (fw fileWriter) Read(p []byte) (int, error) { return fw.f.Read(p) }
