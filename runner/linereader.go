package runner

import (
	"bytes"
	"io"
	"log/slog"
	"runtime"
)

const (
	readBufSize = 256 << 10
	// MaxLineBytes is the longest line LineReader returns. A longer one is
	// skipped: copied to the tee, counted and logged, while the pipe keeps
	// draining. Real lines pass 64 MB (an Edit result carrying the original
	// file); the bound keeps a runaway line from taking the machine.
	MaxLineBytes = 256 << 20
)

// LineReader reads newline-terminated lines of any length up to MaxLineBytes
// (bufio.Scanner would stop at its token limit) and copies every raw line to
// a tee, such as the session log, before the caller sees it.
//
// Lines up to readBufSize are read into a small heap buffer. A longer line
// is read into an anonymous memory mapping of MaxLineBytes that the kernel
// backs only as it is written, so a line costs its own size once: a buffer
// grown by doubling held ≈2.2× the longest line at its peak (old buffers
// copied and not yet returned to the OS). The mapping is released when the
// lines fit the heap buffer again and at the end of input. Where mappings
// are unavailable the buffer grows by doubling.
type LineReader struct {
	r          io.Reader
	tee        io.Writer
	teeErr     error
	log        *slog.Logger
	small      []byte // the heap buffer
	buf        []byte // small, or big.b while a long line is read
	big        *mapping
	bigCleanup runtime.Cleanup
	start, end int   // buf[start:end] is read but not yet returned
	err        error // sticky read error, returned once the data before it is used

	maxLine    int                // MaxLineBytes; smaller in tests
	newMapping func(int) *mapping // nil result: grow a heap buffer

	skipping bool  // discarding an over-long line up to its newline
	skipLen  int64 // bytes of the line being skipped
	skipped  int   // lines skipped so far
}

// NewLineReader reads r; tee may be nil. Skipped over-long lines are
// logged to the logger set with WithLogger, if any.
func NewLineReader(r io.Reader, tee io.Writer) *LineReader {
	small := make([]byte, readBufSize)
	return &LineReader{
		r: r, tee: tee, small: small, buf: small, log: slog.New(slog.DiscardHandler),
		maxLine: MaxLineBytes, newMapping: newMapping,
	}
}

// WithLogger sets where skipped over-long lines are reported, and returns r.
func (r *LineReader) WithLogger(log *slog.Logger) *LineReader {
	if log != nil {
		r.log = log
	}
	return r
}

// Skipped is the number of lines over MaxLineBytes skipped so far.
func (r *LineReader) Skipped() int { return r.skipped }

// TeeErr is the first error the tee returned; the tee is not written after it.
func (r *LineReader) TeeErr() error { return r.teeErr }

// Next returns the next line without its trailing "\n" (or "\r\n"). The
// slice is only valid until the following call, and only while the reader
// is in use: it may point into the reader's mapping. At the end of input it
// returns the unterminated remainder, if any, with io.EOF; other read errors
// are returned as they are. A failing tee does not stop reading: see TeeErr.
// A line longer than MaxLineBytes is never returned: see Skipped.
func (r *LineReader) Next() ([]byte, error) {
	r.shrink()
	scanned := r.start // bytes before this hold no newline
	for {
		if k := bytes.IndexByte(r.buf[scanned:r.end], '\n'); k >= 0 {
			end := scanned + k + 1
			if r.skipping || end-1-r.start > r.maxLine {
				r.skipping = true
				r.skip(end)
				r.endSkip()
				scanned = r.start
				continue
			}
			return r.take(end, end-1), nil
		}
		scanned = r.end
		if r.err != nil {
			return r.last()
		}
		if r.skipping || r.end-r.start > r.maxLine {
			r.skipping = true
			r.skip(r.end)
			scanned = r.start
		}
		if r.end == len(r.buf) {
			scanned -= r.makeRoom()
		}
		// Read at most readBufSize at a time: a file could fill the mapping
		// with many lines at once and make it all resident.
		n, err := r.r.Read(r.buf[r.end:min(len(r.buf), r.end+readBufSize)])
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
	r.teeWrite(raw)
	return line
}

// last returns what is left at a read error. A remainder in the mapping
// is copied out so the mapping can go now: a caller typically uses the
// last line after it has dropped the reader.
func (r *LineReader) last() ([]byte, error) {
	if r.skipping || r.end-r.start > r.maxLine {
		r.skip(r.end)
		r.endSkip()
	}
	var line []byte
	if r.start < r.end {
		line = r.take(r.end, r.end)
		if r.big != nil {
			line = bytes.Clone(line)
		}
	}
	// Nothing is pending after a read error.
	r.buf, r.start, r.end = r.small, 0, 0
	r.release()
	return line, r.err
}

// skip tees and drops buf[start:end], part of an over-long line.
func (r *LineReader) skip(end int) {
	r.teeWrite(r.buf[r.start:end])
	r.skipLen += int64(end - r.start)
	r.start = end
	if r.start == r.end { // read the rest of it at the front, not across the mapping
		r.start, r.end = 0, 0
	}
}

func (r *LineReader) endSkip() {
	r.skipped++
	r.log.Warn("skipped a stdout line over the size limit; it is in the session log only",
		"bytes", r.skipLen, "limit", r.maxLine, "skipped", r.skipped)
	r.skipping, r.skipLen = false, 0
}

func (r *LineReader) teeWrite(p []byte) {
	if r.tee != nil && r.teeErr == nil && len(p) > 0 {
		if _, err := r.tee.Write(p); err != nil {
			r.teeErr = err
		}
	}
}

// makeRoom makes room after the unread part of the full buffer and returns
// how far that part moved: it moves to the front, or into the mapping (a
// doubled heap buffer where there is none) when it fills more than half.
func (r *LineReader) makeRoom() int {
	pending := r.buf[r.start:r.end]
	shift := r.start
	if len(pending) >= len(r.buf)/2 {
		if r.big == nil {
			r.big = r.newMapping(r.maxLine + readBufSize)
			if r.big != nil {
				// Only for a reader dropped in the middle of a long line:
				// release, which every error return calls, stops it.
				r.bigCleanup = runtime.AddCleanup(r, (*mapping).free, r.big)
			}
		}
		switch {
		case r.big != nil && len(r.buf) != len(r.big.b):
			r.buf = r.big.b
		case r.big == nil && len(r.buf) < r.maxLine+readBufSize:
			r.buf = make([]byte, min(2*len(r.buf), r.maxLine+readBufSize))
		}
	}
	r.end = copy(r.buf, pending)
	r.start = 0
	return shift
}

// shrink goes back to the heap buffer once a long line has been returned
// and what is left of the input read so far fits in it.
func (r *LineReader) shrink() {
	if len(r.buf) == len(r.small) || r.end-r.start > len(r.small) {
		return
	}
	r.end = copy(r.small, r.buf[r.start:r.end])
	r.start = 0
	r.buf = r.small
	r.release()
}

// release frees the mapping, if any. What was pending in it has been moved
// out first.
func (r *LineReader) release() {
	if r.big != nil {
		r.bigCleanup.Stop()
		r.big.free()
		r.big = nil
	}
}
