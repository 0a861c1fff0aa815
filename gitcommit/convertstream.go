package gitcommit

// The text statistics git decides conversions on, and the CRLF-to-LF
// conversion of a large file as it streams into an object (convert.go
// decides which conversion a path gets).

import (
	"errors"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// textStat counts what git's gather_stats counts.
type textStat struct {
	nul, loneCR, loneLF, crlf int
	printable, nonprintable   int
}

func gatherStats(b []byte) textStat {
	var w statsWriter
	w.Write(b)
	return w.finish()
}

// statsWriter is gatherStats over content written in pieces.
type statsWriter struct {
	st   textStat
	cr   bool // the last byte written was a CR, not yet counted
	last byte
	n    int64
}

func (w *statsWriter) Write(b []byte) (int, error) {
	s := &w.st
	for _, c := range b {
		if w.cr {
			w.cr = false
			if c == '\n' {
				s.crlf++
				continue
			}
			s.loneCR++
		}
		switch {
		case c == '\r':
			w.cr = true
		case c == '\n':
			s.loneLF++
		case c == 127:
			s.nonprintable++
		case c < 32:
			switch c {
			case '\b', '\t', '\033', '\014':
				s.printable++
			case 0:
				s.nul++
				s.nonprintable++
			default:
				s.nonprintable++
			}
		default:
			s.printable++
		}
	}
	if len(b) > 0 {
		w.last = b[len(b)-1]
	}
	w.n += int64(len(b))
	return len(b), nil
}

func (w *statsWriter) finish() textStat {
	s := w.st
	if w.cr {
		s.loneCR++
	}
	// A trailing ^Z (DOS end of file) does not count as non-printable.
	if w.n > 0 && w.last == '\032' {
		s.nonprintable--
	}
	return s
}

func (s textStat) binary() bool {
	return s.loneCR > 0 || s.nul > 0 || (s.printable>>7) < s.nonprintable
}

// streamConv is the conversion of a large file that streams: CRLF to LF
// only (a clean filter, ident or an encoding reads it whole).
type streamConv struct {
	c         *converter
	name      string
	action    crlfAction
	indexBlob plumbing.Hash
	write     bool
}

// streamConvFor decides how a file over streamThreshold is hashed: ok when
// it streams, conv nil when its content is stored as it is.
func (s *stager) streamConvFor(name string, indexBlob plumbing.Hash) (conv *streamConv, ok bool, err error) {
	c := s.conv
	if c == nil {
		return nil, true, nil
	}
	if c.autocrlf == "false" {
		if none, err := c.attrs.none(name); err != nil || none {
			return nil, err == nil, err
		}
	}
	pc, err := c.forPath(name)
	if err != nil || pc.driver != nil || pc.ident || pc.encoding != "" || pc.badEnc {
		return nil, false, err // toGit reads it whole and says why
	}
	if pc.action == crlfBinary {
		return nil, true, nil
	}
	return &streamConv{c: c, name: name, action: pc.action, indexBlob: indexBlob, write: s.write}, true, nil
}

// plan reads the first size bytes of f for their stats and returns the
// converted size (size when nothing changes).
func (v *streamConv) plan(f io.Reader, size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	var w statsWriter
	if n, err := io.CopyN(&w, f, size); err != nil || n != size {
		if err == nil || errors.Is(err, io.EOF) {
			err = errChangedWhileRead
		}
		return 0, err
	}
	st := w.finish()
	convert, err := v.c.crlfConvert(v.name, st, v.action, v.indexBlob, v.write)
	if err != nil || !convert {
		return size, err
	}
	return size - int64(st.crlf), nil
}

// crlfStripper drops each CR that comes right before an LF, across writes.
type crlfStripper struct {
	w   io.Writer
	cr  bool // a CR held back: is an LF next?
	buf []byte
	n   int64 // bytes written out
}

func (s *crlfStripper) Write(b []byte) (int, error) {
	out := s.buf[:0]
	for _, ch := range b {
		if s.cr {
			s.cr = false
			if ch != '\n' {
				out = append(out, '\r')
			}
		}
		if ch == '\r' {
			s.cr = true
			continue
		}
		out = append(out, ch)
	}
	s.buf = out
	s.n += int64(len(out))
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// flush writes a CR held back at the end.
func (s *crlfStripper) flush() error {
	if !s.cr {
		return nil
	}
	s.cr = false
	s.n++
	_, err := s.w.Write([]byte{'\r'})
	return err
}
