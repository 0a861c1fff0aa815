package commands

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/view"
)

// screen is a terminal's output that tells when the question is on it.
type screen struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	asked chan struct{}
	once  sync.Once
}

func newScreen() *screen { return &screen{asked: make(chan struct{})} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	if strings.Contains(s.buf.String(), "[y/N]") {
		s.once.Do(func() { close(s.asked) })
	}
	return len(p), nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

var spentPhase = orchestrator.ExtendRequest{Phase: "2", Title: "Parser", Scope: "phase", Spent: "tokens 101.2K of 100K",
	By: "tokens 100K", N: 1, Max: 1}

// The question with a fake terminal: what each answer means, and that
// silence, the end of stdin and Ctrl-C are no.
func TestExtendQuestion(t *testing.T) {
	tests := []struct {
		name    string
		answer  string // typed once the question is shown; "" types nothing
		eof     bool   // stdin ends instead
		timeout bool   // the 60 s pass
		cancel  bool   // Ctrl-C
		want    bool
		shows   string
	}{
		{name: "y", answer: "y\n", want: true},
		{name: "yes, loudly", answer: "  YES \n", want: true},
		{name: "n", answer: "n\n"},
		{name: "enter is the default, no", answer: "\n"},
		{name: "anything else is no", answer: "sure\n"},
		{name: "no answer in time", timeout: true, shows: "no (no answer within 1m0s)\n"},
		{name: "stdin ends", eof: true, shows: "no (no input)\n"},
		{name: "interrupted", cancel: true, shows: "no (interrupted)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, typed := io.Pipe()
			defer typed.Close()
			out := newScreen()
			fired := make(chan time.Time, 1)
			q := &extendQuestion{in: in, out: out, timeout: extendTimeout,
				after: func(d time.Duration) <-chan time.Time {
					if d != extendTimeout {
						t.Errorf("timeout %s, want %s", d, extendTimeout)
					}
					return fired
				}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan bool)
			go func() { got <- q.ask(ctx, spentPhase) }()
			<-out.asked
			switch {
			case tt.eof:
				typed.Close()
			case tt.timeout:
				fired <- time.Time{}
			case tt.cancel:
				cancel()
			default:
				io.WriteString(typed, tt.answer)
			}
			if g := <-got; g != tt.want {
				t.Errorf("ask = %v, want %v", g, tt.want)
			}
			text := out.String()
			for _, want := range []string{"debussy: phase 2: the phase budget is spent (tokens 101.2K of 100K); extension 1 of at most 1",
				"Extend the phase budget by tokens 100K (100 %)? [y/N] (no in 1m0s) " + tt.shows} {
				if !strings.Contains(text, want) {
					t.Errorf("screen %q lacks %q", text, want)
				}
			}
		})
	}
}

// While the question is on the screen the live view's panel is off it,
// and it comes back after the answer.
func TestExtendQuestionHoldsTheView(t *testing.T) {
	out := newScreen()
	live := view.NewLive(out, view.Options{Width: func() int { return 0 }, Tick: -1})
	v := &liveView{live: live, logs: live.Writer(out), out: live.Writer(out)}
	defer v.close()
	live.Update(view.Phase{ID: "2", Session: 1})
	in, typed := io.Pipe()
	defer typed.Close()
	q := &extendQuestion{in: in, out: out, timeout: extendTimeout, after: func(time.Duration) <-chan time.Time { return nil }, view: v}
	got := make(chan bool)
	go func() { got <- q.ask(context.Background(), spentPhase) }()
	<-out.asked
	io.WriteString(typed, "y\n")
	if !<-got {
		t.Fatal("a yes was not granted")
	}
	text := out.String()
	erase, question, redraw := strings.Index(text, "\x1b[1A\r\x1b[J"), strings.Index(text, "Extend the phase"), strings.LastIndex(text, "phase 2 · session 1")
	if erase < 0 || question < erase || redraw < question {
		t.Errorf("want the panel erased, the question, then the panel: %q", text)
	}
}

// No terminal, no question: the run is never held by one nobody sees.
func TestExtenderNeedsTerminals(t *testing.T) {
	e := &Env{Stdin: strings.NewReader("y\n"), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if e.extender(nil) != nil {
		t.Error("an extender without terminals")
	}
}
