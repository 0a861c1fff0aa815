package runner

import (
	"bytes"
	"io"
)

const (
	readBufSize = 256 << 10
	// keepBufCap is the largest buffer kept once a big line is done:
	// repeated multi-MB lines (Write inputs, Edit results) reuse it, while
	// one 100 MB line does not pin 100 MB for the rest of the session.
	keepBufCap = 16 << 20
)

// LineReader reads newline-terminated lines of any length (bufio.Scanner
// would stop at its token limit) and copies every raw line to a tee, such
// as the session log, before the caller sees it. It reads straight into
// its own buffer, so a multi-megabyte line is copied once, not through
// bufio and then into a growing slice.
type LineReader struct {
	r          io.Reader
	tee        io.Writer
	teeErr     error
	buf        []byte
	start, end int   // buf[start:end] is read but not yet returned
	err        error // sticky read error, returned once the data before it is used
}

// NewLineReader reads r; tee may be nil.
func NewLineReader(r io.Reader, tee io.Writer) *LineReader {
	return &LineReader{r: r, tee: tee, buf: make([]byte, readBufSize)}
}

// Next returns the next line without its trailing "\n" (or "\r\n"). The
// slice is only valid until the following call. At the end of input it
// returns the unterminated remainder, if any, with io.EOF; other read errors
// are returned as they are. A failing tee does not stop reading: see TeeErr.
func (r *LineReader) Next() ([]byte, error) {
	if len(r.buf) > keepBufCap && r.end-r.start <= readBufSize {
		small := make([]byte, readBufSize)
		r.end = copy(small, r.buf[r.start:r.end])
		r.buf, r.start = small, 0
	}
	scanned := r.start // bytes before this hold no newline
	for {
		if k := bytes.IndexByte(r.buf[scanned:r.end], '\n'); k >= 0 {
			end := scanned + k + 1
			return r.take(end, end-1), nil
		}
		scanned = r.end
		if r.err != nil {
			if r.start == r.end {
				return nil, r.err
			}
			return r.take(r.end, r.end), r.err
		}
		if r.end == len(r.buf) {
			scanned -= r.makeRoom()
		}
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.err = err
		}
	}
}

// take consumes buf[start:end], tees it and returns buf[start:lineEnd]
// without a trailing "\r".
func (r *LineReader) take(end, lineEnd int) []byte {
	raw := r.buf[r.start:end]
	line := bytes.TrimSuffix(r.buf[r.start:lineEnd], []byte("\r"))
	r.start = end
	if r.tee != nil && r.teeErr == nil {
		if _, err := r.tee.Write(raw); err != nil {
			r.teeErr = err
		}
	}
	return line
}

// makeRoom moves the unread part of the full buffer to its front, into a
// buffer twice the size when that part fills more than half of it, and
// returns how far the data moved.
func (r *LineReader) makeRoom() int {
	pending := r.buf[r.start:r.end]
	if len(pending) >= len(r.buf)/2 {
		r.buf = make([]byte, 2*len(r.buf))
	}
	shift := r.start
	r.end = copy(r.buf, pending)
	r.start = 0
	return shift
}

// TeeErr is the first error the tee returned; the tee is not written after it.
func (r *LineReader) TeeErr() error { return r.teeErr }
