package runner

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader, tee io.Writer) ([]string, error) {
	t.Helper()
	return readLines(t, NewLineReader(r, tee))
}

func readLines(t *testing.T, lr *LineReader) ([]string, error) {
	t.Helper()
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

// testReader reads input in short reads, like a pipe, with lines limited to
// testMaxLine; mode "heap" grows a heap buffer, as where mappings are
// unavailable.
func testReader(input, mode string, tee io.Writer) *LineReader {
	lr := NewLineReader(iotest.HalfReader(strings.NewReader(input)), tee)
	lr.maxLine = testMaxLine
	if mode == "heap" {
		lr.newMapping = func(int) *mapping { return nil }
	}
	return lr
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
		{"long lines in a row", long(3*readBufSize) + "\n" + long(2*readBufSize) + "\n" + long(10) + "\n", []string{long(3 * readBufSize), long(2 * readBufSize), long(10)}},
		{"long last line without newline", "x\n" + long(3*readBufSize), []string{"x", long(3 * readBufSize)}},
		{"at the limit", long(testMaxLine) + "\nz\n", []string{long(testMaxLine), "z"}},
	}
	for _, tt := range tests {
		for _, mode := range []string{"mapping", "heap"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var tee bytes.Buffer
				lr := testReader(tt.input, mode, &tee)
				got, err := readLines(t, lr)
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
				if lr.big != nil || len(lr.buf) != readBufSize {
					t.Errorf("buffer of %d bytes kept after the end of input (mapping %t)", len(lr.buf), lr.big != nil)
				}
			})
		}
	}
}

const testMaxLine = 8 * readBufSize

// A line over the limit is skipped — teed, counted, logged — and the lines
// after it still come through: the pipe is drained, never left full.
func TestLineReaderSkipsOverlongLines(t *testing.T) {
	long := func(n int) string { return strings.Repeat("b", n) }
	tests := []struct {
		name    string
		input   string
		want    []string
		skipped int
	}{
		{"one over", "a\n" + long(testMaxLine+1) + "\nz\n", []string{"a", "z"}, 1},
		{"far over", "a\n" + long(10*testMaxLine+3) + "\nz\n", []string{"a", "z"}, 1},
		{"two in a row", long(2*testMaxLine) + "\n" + long(3*testMaxLine) + "\nz", []string{"z"}, 2},
		{"at the end without newline", "a\n" + long(2*testMaxLine), []string{"a"}, 1},
		{"crlf", long(2*testMaxLine) + "\r\nz\r\n", []string{"z"}, 1},
	}
	for _, tt := range tests {
		for _, mode := range []string{"mapping", "heap"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var tee, logs bytes.Buffer
				lr := testReader(tt.input, mode, &tee).WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))
				got, err := readLines(t, lr)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("lines %.80q, want %q", got, tt.want)
				}
				if lr.Skipped() != tt.skipped || strings.Count(logs.String(), "over the size limit") != tt.skipped {
					t.Errorf("skipped %d, want %d; log:\n%s", lr.Skipped(), tt.skipped, logs.String())
				}
				if tee.String() != tt.input {
					t.Errorf("tee got %d bytes, want the %d input bytes", tee.Len(), len(tt.input))
				}
				if len(lr.buf) > testMaxLine+readBufSize && lr.big == nil {
					t.Errorf("heap buffer grew to %d bytes", len(lr.buf))
				}
			})
		}
	}
}

// After a long line the mapping goes and the small buffer is used again.
func TestLineReaderReleasesMapping(t *testing.T) {
	input := strings.Repeat("c", 3*readBufSize) + "\nx\ny\n"
	lr := NewLineReader(strings.NewReader(input), nil)
	line, err := lr.Next()
	if err != nil || len(line) != 3*readBufSize {
		t.Fatalf("first line: %d bytes, %v", len(line), err)
	}
	if lr.big == nil {
		t.Skip("no mapping on this system")
	}
	if line, err := lr.Next(); err != nil || string(line) != "x" {
		t.Fatalf("second line %q, %v", line, err)
	}
	if lr.big != nil || len(lr.buf) != readBufSize {
		t.Errorf("after a short line: buffer %d bytes, mapping %t", len(lr.buf), lr.big != nil)
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

// A read error mid-line returns the remainder, copied out of the mapping,
// with the error, and frees the mapping.
func TestLineReaderReadErrorMidLine(t *testing.T) {
	boom := errors.New("boom")
	long := strings.Repeat("d", 3*readBufSize)
	lr := NewLineReader(io.MultiReader(strings.NewReader("a\n"+long), iotest.ErrReader(boom)), nil)
	if line, err := lr.Next(); err != nil || string(line) != "a" {
		t.Fatalf("first line %q, %v", line, err)
	}
	line, err := lr.Next()
	if !errors.Is(err, boom) || string(line) != long {
		t.Fatalf("remainder: %d bytes, %v; want %d bytes and boom", len(line), err, len(long))
	}
	if lr.big != nil || len(lr.buf) != readBufSize {
		t.Errorf("after the error: buffer %d bytes, mapping %t", len(lr.buf), lr.big != nil)
	}
	if line, err := lr.Next(); line != nil || !errors.Is(err, boom) {
		t.Errorf("after the error: %q, %v", line, err)
	}
}
