package runner

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader, tee io.Writer) ([]string, error) {
	t.Helper()
	lr := NewLineReader(r, tee)
	var lines []string
	for {
		line, err := lr.Next()
		if len(line) > 0 || err == nil {
			lines = append(lines, string(line))
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return lines, nil
			}
			return lines, err
		}
	}
}

func TestLineReader(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"simple", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"empty lines", "\n\na\n", []string{"", "", "a"}},
		{"buffer size", long(readBufSize) + "\nz\n", []string{long(readBufSize), "z"}},
		{"buffer size minus one", long(readBufSize-1) + "\nz\n", []string{long(readBufSize - 1), "z"}},
		{"buffer size plus one", long(readBufSize+1) + "\nz\n", []string{long(readBufSize + 1), "z"}},
		{"several buffers", "x\n" + long(5*readBufSize+7) + "\n" + long(3) + "\n", []string{"x", long(5*readBufSize + 7), long(3)}},
		{"kept buffer dropped", long(keepBufCap+5) + "\n" + long(10) + "\n", []string{long(keepBufCap + 5), long(10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tee bytes.Buffer
			// HalfReader returns short reads, like a pipe.
			got, err := readAll(t, iotest.HalfReader(strings.NewReader(tt.input)), &tee)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lines, want %d", len(got), len(tt.want))
			}
			for k := range got {
				if got[k] != tt.want[k] {
					t.Errorf("line %d: %d bytes, want %d", k, len(got[k]), len(tt.want[k]))
				}
			}
			if tee.String() != tt.input {
				t.Errorf("tee got %d bytes, want the %d input bytes", tee.Len(), len(tt.input))
			}
		})
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestLineReaderKeepsReadingWhenTeeFails(t *testing.T) {
	w := &failWriter{}
	lr := NewLineReader(strings.NewReader("a\nb\nc\n"), w)
	var got []string
	for {
		line, err := lr.Next()
		if err != nil {
			break
		}
		got = append(got, string(line))
	}
	if strings.Join(got, ",") != "a,b,c" || lr.TeeErr() == nil || w.n != 1 {
		t.Errorf("lines %q, tee err %v, tee writes %d", got, lr.TeeErr(), w.n)
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// A 100 MB line (an Edit result carrying a whole file) must come through
// whole: bufio.Scanner would stop at its token limit.
func TestLineReaderHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB line")
	}
	const size = 100 << 20
	r := io.MultiReader(
		strings.NewReader(`{"type":"user","x":"`),
		io.LimitReader(repeatReader('y'), size),
		strings.NewReader("\"}\n{\"type\":\"result\"}\n"),
	)
	tee := &countWriter{}
	lr := NewLineReader(r, tee)
	first, err := lr.Next()
	if err != nil || len(first) != size+len(`{"type":"user","x":""}`) {
		t.Fatalf("first line: %d bytes, %v", len(first), err)
	}
	ev, err := Parse(first)
	if err != nil || ev.Kind != KindUser {
		t.Fatalf("parse huge line: %v %v", ev.Kind, err)
	}
	second, err := lr.Next()
	if err != nil || string(second) != `{"type":"result"}` {
		t.Fatalf("second line %q, %v", second, err)
	}
	if want := int64(size + len(`{"type":"user","x":""}`) + len(`{"type":"result"}`) + 2); tee.n != want {
		t.Errorf("tee got %d bytes, want %d", tee.n, want)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for k := range p {
		p[k] = byte(r)
	}
	return len(p), nil
}
