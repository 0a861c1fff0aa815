package commands

import (
	"io"
	"sync"
)

// lineEnd is stderr as Run hands it to everything debussy prints: it
// remembers whether the last byte written ended a line, so that debussy's
// own lines (an error, the warnings and problems of check) start on a line
// of their own after output that did not end one — a question's prompt, a
// panel line, an error printed without its newline. Without it an error and
// the warning after it ran together ("…in $PATHwarning: …").
type lineEnd struct {
	mu  sync.Mutex
	w   io.Writer
	mid bool // the last byte written was not a newline
}

func (l *lineEnd) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if n > 0 {
		l.mid = p[n-1] != '\n'
	}
	return n, err
}

// Fd is the file descriptor beneath, for the terminal checks (the live
// view, the budget question); an invalid one when there is no file.
func (l *lineEnd) Fd() uintptr {
	if f, ok := l.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// startLine ends the line w is in the middle of, if any.
func startLine(w io.Writer) {
	l, ok := w.(*lineEnd)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mid {
		if _, err := l.w.Write([]byte("\n")); err == nil {
			l.mid = false
		}
	}
}
