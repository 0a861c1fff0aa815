package view

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/debussy-dev/debussy/public"
)

// Enabled reports whether the live view belongs on w: a terminal, not a
// dumb one, outside CI, with text logs (JSON logs are for machines).
func Enabled(w io.Writer, getenv func(string) string, jsonLogs bool) bool {
	f, ok := w.(interface{ Fd() uintptr }) // an *os.File, maybe behind secrets.Writer
	if !ok || jsonLogs || !term.IsTerminal(f.Fd()) {
		return false
	}
	if getenv("TERM") == "dumb" || public.InCI(getenv) || getenv("DEBUSSY_NO_VIEW") != "" {
		return false
	}
	return true
}

// Live draws the phases below everything written through its writers:
// before a log line it erases the panel, writes the whole line and draws
// the panel again, so a log line is never cut by a redraw.
type Live struct {
	mu     sync.Mutex
	term   io.Writer
	width  func() int
	now    func() time.Time
	color  bool
	phases []Phase
	drawn  int      // panel lines on screen
	shown  []string // those lines, to skip a redraw that changes nothing
	closed bool
	// held: a question is on the screen (Hold); lines wait in pending
	// and the panel is not drawn until Release.
	held    bool
	pending []heldLine
	stop    chan struct{}
	done    chan struct{}
}

// Options configure a Live; zero values are fine.
type Options struct {
	// Width is the terminal's width in columns; nil asks the terminal
	// (when it is a file) on every redraw, so a resize is followed.
	Width func() int
	Now   func() time.Time
	Color bool
	// Tick is how often the elapsed times are redrawn; 0 means 1 s and
	// negative means never (tests draw on updates only).
	Tick time.Duration
}

// NewLive starts a live view on t, the terminal. Close it before anything
// else writes to the terminal.
func NewLive(t io.Writer, opts Options) *Live {
	l := &Live{term: t, width: opts.Width, now: opts.Now, color: opts.Color,
		stop: make(chan struct{}), done: make(chan struct{})}
	if l.now == nil {
		l.now = time.Now
	}
	if l.width == nil {
		l.width = func() int { return 0 }
		if f, ok := t.(interface{ Fd() uintptr }); ok {
			l.width = func() int {
				w, _, err := term.GetSize(f.Fd())
				if err != nil {
					return 0
				}
				return w
			}
		}
	}
	tick := opts.Tick
	if tick == 0 {
		tick = time.Second
	}
	go l.tick(tick)
	return l
}

func (l *Live) tick(every time.Duration) {
	defer close(l.done)
	if every < 0 {
		<-l.stop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			if len(l.phases) > 0 && !l.closed {
				l.redraw(nil, nil)
			}
			l.mu.Unlock()
		}
	}
}

// Update sets a phase's line (by ID) and redraws. A phase whose session
// ended keeps its elapsed time as it was then, and is dropped once another
// phase reports.
func (l *Live) Update(p Phase) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	kept := l.phases[:0]
	found := false
	for _, q := range l.phases {
		switch {
		case q.ID == p.ID:
			if p.Ended && p.EndedAt.IsZero() {
				p.EndedAt = q.EndedAt // the first report of the end sets it
			}
			kept = append(kept, p)
			found = true
		case !q.Ended:
			kept = append(kept, q)
		}
	}
	if !found {
		kept = append(kept, p)
	}
	// A session that ended stops its phase's clock: the tick redraws
	// nothing for it until the next session (or phase) reports.
	for i := range kept {
		if kept[i].Ended && kept[i].EndedAt.IsZero() {
			kept[i].EndedAt = l.now()
		}
	}
	l.phases = kept
	l.redraw(nil, nil)
}

// Remove drops a phase's line (the phase ended).
func (l *Live) Remove(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.phases[:0]
	for _, q := range l.phases {
		if q.ID != id {
			kept = append(kept, q)
		}
	}
	l.phases = kept
	if !l.closed {
		l.redraw(nil, nil)
	}
}

type heldLine struct {
	w    io.Writer
	data []byte
}

// Hold erases the panel and holds every writer's lines until Release, so
// that a question asked on the terminal (a budget's extension) is neither
// drawn over nor cut by a log line. Updates are kept and shown on Release.
func (l *Live) Hold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.held {
		return
	}
	if l.drawn > 0 {
		l.term.Write([]byte("\x1b[" + strconv.Itoa(l.drawn) + "A\r\x1b[J"))
		l.drawn = 0
	}
	l.held = true
}

// Release writes the lines held since Hold, in order, and draws the panel.
func (l *Live) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release()
	if !l.closed {
		l.redraw(nil, nil)
	}
}

// release writes the held lines; callers hold mu.
func (l *Live) release() {
	if !l.held {
		return
	}
	l.held = false
	for _, h := range l.pending {
		h.w.Write(h.data)
	}
	l.pending = nil
}

// Close erases the panel, stops the clock and lets the writers write
// through; it is safe to call more than once.
func (l *Live) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.phases = nil
	l.release()
	l.redraw(nil, nil)
	l.closed = true
	close(l.stop)
	l.mu.Unlock()
	<-l.done
}

// redraw erases the panel, writes data to w (when set) and draws the panel
// again, as one write to the terminal when w is the terminal. Callers hold mu.
func (l *Live) redraw(w io.Writer, data []byte) {
	if l.held {
		if w != nil {
			l.pending = append(l.pending, heldLine{w: w, data: append([]byte(nil), data...)})
		}
		return
	}
	width := l.width()
	if width > 0 {
		width-- // the last column would wrap on some terminals
	}
	lines := Render(l.phases, l.now(), width, l.color)
	if w == nil && l.drawn == len(lines) && slices.Equal(lines, l.shown) {
		return // the panel on screen says this already: no flicker, no bytes
	}
	var buf bytes.Buffer
	if l.drawn > 0 {
		// Up to the panel's first line, then erase to the end of the screen.
		buf.WriteString("\x1b[" + strconv.Itoa(l.drawn) + "A\r\x1b[J")
	}
	if w != nil && w != l.term {
		l.term.Write(buf.Bytes())
		buf.Reset()
		w.Write(data)
	} else {
		buf.Write(data)
	}
	for _, line := range lines {
		buf.WriteString(line)
		buf.WriteString("\x1b[K\n")
	}
	l.drawn, l.shown = len(lines), lines
	l.term.Write(buf.Bytes())
}

// Writer returns a writer for w (the terminal or another stream on the same
// screen) that writes whole lines above the panel. A partial line waits for
// its newline or for Flush.
func (l *Live) Writer(w io.Writer) *LineWriter {
	return &LineWriter{l: l, w: w}
}

// LineWriter is a Live's writer; see Live.Writer.
type LineWriter struct {
	l       *Live
	w       io.Writer
	partial []byte
}

func (lw *LineWriter) Write(p []byte) (int, error) {
	lw.l.mu.Lock()
	defer lw.l.mu.Unlock()
	if lw.l.closed {
		if len(lw.partial) > 0 {
			lw.w.Write(lw.partial)
			lw.partial = nil
		}
		return lw.w.Write(p)
	}
	lw.partial = append(lw.partial, p...)
	i := bytes.LastIndexByte(lw.partial, '\n')
	if i < 0 {
		return len(p), nil
	}
	lines := lw.partial[:i+1]
	lw.l.redraw(lw.w, lines)
	lw.partial = append([]byte(nil), lw.partial[i+1:]...)
	return len(p), nil
}

// Flush writes a partial line, if any.
func (lw *LineWriter) Flush() {
	lw.l.mu.Lock()
	defer lw.l.mu.Unlock()
	if len(lw.partial) == 0 {
		return
	}
	if lw.l.closed {
		lw.w.Write(lw.partial)
	} else {
		lw.l.redraw(lw.w, append(lw.partial, '\n'))
	}
	lw.partial = nil
}
