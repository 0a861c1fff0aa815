package view

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/debussy-dev/debussy/internal/ptytest"
)

func fixedLive(t *testing.T, term *bytes.Buffer) *Live {
	t.Helper()
	now := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	l := NewLive(term, Options{Width: func() int { return 0 }, Now: func() time.Time { return now }, Tick: -1})
	t.Cleanup(l.Close)
	return l
}

// TestLiveKeepsLogLinesWhole: the panel is erased before each log line and
// drawn after it, and a line written in pieces reaches the screen whole.
func TestLiveKeepsLogLinesWhole(t *testing.T) {
	var term bytes.Buffer
	l := fixedLive(t, &term)
	logs := l.Writer(&term)
	l.Update(Phase{ID: "1", Session: 1})
	if got, want := term.String(), "phase 1 · session 1 · 0 tools · $0.00\x1b[K\n"; got != want {
		t.Fatalf("first draw = %q, want %q", got, want)
	}
	term.Reset()
	logs.Write([]byte("12:00:00 INFO tool "))
	if term.Len() != 0 {
		t.Fatalf("a partial line reached the terminal: %q", term.String())
	}
	logs.Write([]byte("name=Bash\n"))
	want := "\x1b[1A\r\x1b[J" + "12:00:00 INFO tool name=Bash\n" + "phase 1 · session 1 · 0 tools · $0.00\x1b[K\n"
	if got := term.String(); got != want {
		t.Fatalf("log line = %q, want %q", got, want)
	}
	term.Reset()
	l.Update(Phase{ID: "2", Session: 1, ToolCalls: 1})
	want = "\x1b[1A\r\x1b[J" + "phase 1 · session 1 · 0 tools · $0.00\x1b[K\n" + "phase 2 · session 1 · 1 tool · $0.00\x1b[K\n"
	if got := term.String(); got != want {
		t.Fatalf("second phase = %q, want %q", got, want)
	}
	term.Reset()
	l.Close()
	if got, want := term.String(), "\x1b[2A\r\x1b[J"; got != want {
		t.Fatalf("close = %q, want %q", got, want)
	}
	term.Reset()
	logs.Write([]byte("after\n"))
	if got := term.String(); got != "after\n" {
		t.Fatalf("after close = %q, want the line alone", got)
	}
}

// TestLiveOtherStream: a line for another stream on the same screen (the
// summary on stdout) goes to that stream, between the erase and the redraw.
func TestLiveOtherStream(t *testing.T) {
	var term, out bytes.Buffer
	l := fixedLive(t, &term)
	l.Update(Phase{ID: "1"})
	stdout := l.Writer(&out)
	stdout.Write([]byte("summary"))
	stdout.Flush()
	if out.String() != "summary\n" {
		t.Fatalf("stdout = %q", out.String())
	}
	if got := strings.Count(term.String(), "phase 1"); got != 2 {
		t.Fatalf("panel drawn %d times, want 2: %q", got, term.String())
	}
}

// TestLiveEndedPhaseMakesRoom: a phase whose session ended leaves the panel
// when another phase reports.
func TestLiveEndedPhaseMakesRoom(t *testing.T) {
	var term bytes.Buffer
	l := fixedLive(t, &term)
	l.Update(Phase{ID: "1", Session: 1, Ended: true})
	l.Update(Phase{ID: "2", Session: 1})
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.phases) != 1 || l.phases[0].ID != "2" {
		t.Fatalf("phases = %+v, want phase 2 alone", l.phases)
	}
}

func TestEnabled(t *testing.T) {
	_, tty := ptytest.Open(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name string
		w    any
		env  func(string) string
		json bool
		want bool
	}{
		{name: "terminal", w: tty, env: env("TERM", "xterm"), want: true},
		{name: "pipe", w: pw, env: env("TERM", "xterm")},
		{name: "buffer", w: &bytes.Buffer{}, env: env()},
		{name: "json logs", w: tty, env: env("TERM", "xterm"), json: true},
		{name: "CI", w: tty, env: env("TERM", "xterm", "CI", "true")},
		{name: "CI=1", w: tty, env: env("TERM", "xterm", "CI", "1")},
		{name: "CI=false: the log's rule, public.InCI", w: tty, env: env("TERM", "xterm", "CI", "false"), want: true},
		{name: "dumb terminal", w: tty, env: env("TERM", "dumb")},
		{name: "opted out", w: tty, env: env("DEBUSSY_NO_VIEW", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.w.(interface{ Write([]byte) (int, error) })
			if got := Enabled(w, tt.env, tt.json); got != tt.want {
				t.Errorf("Enabled = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLiveOnPTY draws on a real terminal of 50 columns: every panel line
// fits (no wrap), and the log line arrives whole.
func TestLiveOnPTY(t *testing.T) {
	master, tty := ptytest.Open(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 50}); err != nil {
		t.Fatalf("set size: %v", err)
	}
	got := make(chan string)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil || bytes.Contains(all, []byte("END")) {
				got <- string(all)
				return
			}
		}
	}()
	l := NewLive(tty, Options{Tick: -1})
	logs := l.Writer(tty)
	l.Update(Phase{ID: "7", Title: "A long title that cannot fit", Session: 3, Tokens: 150_000, Window: 200_000,
		Zone: "yellow", ToolCalls: 12, TotalTokens: 3_000_000, CostUSD: 1.5, Restarts: 2, Started: time.Now()})
	logs.Write([]byte("INFO a log line\n"))
	l.Close()
	logs.Write([]byte("END\n"))
	out := <-got
	if !strings.Contains(out, "phase 7") || !strings.Contains(out, "yellow") {
		t.Errorf("panel not drawn: %q", out)
	}
	if !strings.Contains(out, "INFO a log line\r\n") {
		t.Errorf("log line not whole: %q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		plain := strings.TrimSuffix(stripANSI(line), "\r")
		if w := len([]rune(plain)); w > 49 {
			t.Errorf("line of %d columns on a 50-column terminal: %q", w, plain)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestLiveHold: while a question is on the screen the panel is gone and
// log lines wait; Release writes them in order and draws the panel again.
func TestLiveHold(t *testing.T) {
	var term, out bytes.Buffer
	l := fixedLive(t, &term)
	logs, stdout := l.Writer(&term), l.Writer(&out)
	l.Update(Phase{ID: "1", Session: 1})
	term.Reset()
	l.Hold()
	if got, want := term.String(), "\x1b[1A\r\x1b[J"; got != want {
		t.Fatalf("hold = %q, want the panel erased", got)
	}
	term.Reset()
	logs.Write([]byte("12:00:00 WARN budget\n"))
	stdout.Write([]byte("summary\n"))
	l.Update(Phase{ID: "1", Session: 1, ToolCalls: 2})
	term.WriteString("extend? [y/N] y\n") // the question, written straight to the terminal
	if got := term.String(); got != "extend? [y/N] y\n" || out.Len() != 0 {
		t.Fatalf("while held: terminal %q, stdout %q", got, out.String())
	}
	term.Reset()
	l.Release()
	if got, want := term.String(), "12:00:00 WARN budget\n"+"phase 1 · session 1 · 2 tools · $0.00\x1b[K\n"; got != want {
		t.Fatalf("release = %q, want %q", got, want)
	}
	if out.String() != "summary\n" {
		t.Fatalf("stdout = %q", out.String())
	}
	// Close releases what a hold kept.
	l.Hold()
	logs.Write([]byte("last\n"))
	term.Reset()
	l.Close()
	if got := term.String(); got != "last\n" {
		t.Fatalf("close while held = %q", got)
	}
}

// An update that changes nothing on the panel writes nothing: no flicker.
func TestLiveSkipsAnUnchangedPanel(t *testing.T) {
	var term bytes.Buffer
	l := fixedLive(t, &term)
	l.Update(Phase{ID: "1", Session: 1})
	term.Reset()
	l.Update(Phase{ID: "1", Session: 1})
	if term.Len() != 0 {
		t.Fatalf("an unchanged panel was redrawn: %q", term.String())
	}
	l.Update(Phase{ID: "1", Session: 1, ToolCalls: 1})
	if want := "\x1b[1A\r\x1b[J" + "phase 1 · session 1 · 1 tool · $0.00\x1b[K\n"; term.String() != want {
		t.Fatalf("a changed panel = %q, want %q", term.String(), want)
	}
}

// A phase whose session ended stops ticking: its elapsed time stays at the
// end and the clock's redraws write nothing, until a session reports again.
func TestLiveEndedPhaseStopsTicking(t *testing.T) {
	var term bytes.Buffer
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	l := NewLive(&term, Options{Width: func() int { return 0 }, Now: clock, Tick: -1})
	t.Cleanup(l.Close)
	started := clock()
	l.Update(Phase{ID: "1", Session: 1, Started: started})
	advance(90 * time.Second)
	l.Update(Phase{ID: "1", Session: 1, Started: started, Ended: true})
	ended := term.String()
	for range 3 {
		advance(time.Minute)
		l.mu.Lock()
		l.redraw(nil, nil) // what the clock's tick does
		l.mu.Unlock()
		l.Update(Phase{ID: "1", Session: 1, Started: started, Ended: true}) // a late report of the same end
	}
	if term.String() != ended {
		t.Errorf("the ended phase kept ticking:\n%q", strings.TrimPrefix(term.String(), ended))
	}
	if !strings.Contains(ended, "1m30s") {
		t.Errorf("the elapsed time at the end is not 1m30s: %q", ended)
	}
	// The next session starts the clock again.
	l.Update(Phase{ID: "1", Session: 2, Started: started})
	if !strings.Contains(term.String()[len(ended):], "4m30s") {
		t.Errorf("the next session's clock: %q", term.String()[len(ended):])
	}
}
