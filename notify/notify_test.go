package notify

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
)

// receiver is a loopback stand-in for a notification target: it records
// every request it gets.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []request
	hits atomic.Int32
}

type request struct {
	header http.Header
	body   string
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(rc.hits.Add(1))
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, request{header: r.Header.Clone(), body: string(body)})
		rc.mu.Unlock()
		if answer != nil {
			answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

func fastBackoff(int) time.Duration { return 10 * time.Millisecond }

// aSecret has the shape of an AWS access key: the redactor's rules catch it.
const aSecret = "AKIAQWERTYUIOPASDFGH"

func blockedEvent() Event {
	code := 1
	return Event{Event: Blocked, Run: "r1", Plan: "plan", Phase: "2", Status: "blocked",
		Question: "needs the staging key; mine was " + aSecret + "\nsecond line", Answer: `debussy answer --phase 2 "…"`,
		Message: "phase 2 is blocked", ExitCode: &code, Summary: &Summary{Markdown: "| 2 | x | blocked |", Phases: []PhaseState{{ID: "2", Status: "blocked"}}}}
}

func TestSenders(t *testing.T) {
	tests := []struct {
		kind  string
		check func(t *testing.T, r request)
	}{
		{config.NotifyWebhook, func(t *testing.T, r request) {
			var ev Event
			if err := json.Unmarshal([]byte(r.body), &ev); err != nil {
				t.Fatalf("webhook body is not an event: %v\n%s", err, r.body)
			}
			if ev.Event != Blocked || ev.Phase != "2" || ev.Answer != `debussy answer --phase 2 "…"` || ev.Summary == nil || len(ev.Summary.Phases) != 1 {
				t.Errorf("webhook event = %+v", ev)
			}
			if !strings.HasPrefix(ev.Question, "needs the staging key") || strings.Contains(ev.Question, "\n") {
				t.Errorf("question = %q, want the first line", ev.Question)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		}},
		{config.NotifyNtfy, func(t *testing.T, r request) {
			if r.body != "phase 2 is blocked" {
				t.Errorf("ntfy body = %q", r.body)
			}
			title, err := new(mime.WordDecoder).DecodeHeader(r.header.Get("Title"))
			if got := title; err != nil || got != "debussy: plan — phase 2 blocked" {
				t.Errorf("Title = %q", got)
			}
			if got := r.header.Get("Priority"); got != "high" {
				t.Errorf("Priority = %q", got)
			}
			if got := r.header.Get("Tags"); !strings.Contains(got, "question") {
				t.Errorf("Tags = %q", got)
			}
		}},
		{config.NotifySlack, func(t *testing.T, r request) {
			var m map[string]string
			if err := json.Unmarshal([]byte(r.body), &m); err != nil || !strings.Contains(m["text"], "phase 2 is blocked") || len(m) != 1 {
				t.Errorf("slack body = %s (%v)", r.body, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			rc := newReceiver(t, nil)
			d := New([]config.Notify{{Kind: tt.kind, URL: rc.URL + "/hook/path"}}, Options{Backoff: fastBackoff})
			d.Send(blockedEvent())
			if !d.Flush() {
				t.Fatal("Flush timed out")
			}
			got := rc.requests()
			if len(got) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(got))
			}
			if strings.Contains(got[0].body, aSecret) {
				t.Errorf("the secret arrived: %s", got[0].body)
			}
			tt.check(t, got[0])
		})
	}
}

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := filepath.Join(dir, "hook.sh")
	// The event in its environment, the JSON on stdin.
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"$DEBUSSY_EVENT $DEBUSSY_PHASE $DEBUSSY_EXIT_CODE\"; echo \"$DEBUSSY_ANSWER_COMMAND\"; cat; } > \""+out+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := New([]config.Notify{{Kind: config.NotifyCommand, Command: []string{script}}}, Options{Backoff: fastBackoff})
	d.Send(blockedEvent())
	if !d.Flush() {
		t.Fatal("Flush timed out")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(data), "\n", 3)
	if lines[0] != "blocked 2 1" || lines[1] != `debussy answer --phase 2 "…"` {
		t.Errorf("environment seen: %q", lines[:2])
	}
	var ev Event
	if err := json.Unmarshal([]byte(lines[2]), &ev); err != nil || ev.Event != Blocked {
		t.Errorf("stdin = %q (%v)", lines[2], err)
	}
	if strings.Contains(string(data), aSecret) {
		t.Errorf("the secret reached the command: %s", data)
	}
}

// A command that hangs is killed, with what it started, at its timeout.
func TestCommandTimeout(t *testing.T) {
	var failed []Failure
	var mu sync.Mutex
	d := New([]config.Notify{{Kind: config.NotifyCommand, Command: []string{"sh", "-c", "sleep 60 & sleep 60"},
		Timeout: config.Duration(300 * time.Millisecond)}}, Options{Backoff: fastBackoff, OnFailure: func(f Failure) {
		mu.Lock()
		failed = append(failed, f)
		mu.Unlock()
	}})
	start := time.Now()
	d.Send(Event{Event: Completed})
	d.Flush()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a hanging command took %s, want about its timeout", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failed) != 1 || failed[0].Kind != config.NotifyCommand || failed[0].Event != Completed {
		t.Errorf("failures = %+v", failed)
	}
}

// Retries: a 500 is tried again, a 404 is not; the timeout bounds them all.
func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		answer    func(n int, w http.ResponseWriter, r *http.Request)
		wantHits  int32
		wantFails int
	}{
		{"500 then ok", func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				w.WriteHeader(500)
			}
		}, 2, 0},
		{"always 500", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, maxAttempts, 1},
		{"404 is final", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(404) }, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReceiver(t, tt.answer)
			var fails atomic.Int32
			d := New([]config.Notify{{Kind: config.NotifyWebhook, URL: rc.URL}}, Options{Backoff: fastBackoff,
				OnFailure: func(Failure) { fails.Add(1) }})
			d.Send(Event{Event: Failed})
			d.Flush()
			if got := rc.hits.Load(); got != tt.wantHits {
				t.Errorf("receiver hit %d times, want %d", got, tt.wantHits)
			}
			if got := int(fails.Load()); got != tt.wantFails {
				t.Errorf("%d failures reported, want %d", got, tt.wantFails)
			}
		})
	}
}

// A receiver that hangs costs its timeout, not more; a dead one less.
func TestHangingAndDeadReceivers(t *testing.T) {
	release := make(chan struct{})
	hang := newReceiver(t, func(int, http.ResponseWriter, *http.Request) { <-release })
	defer close(release)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	var fails atomic.Int32
	d := New([]config.Notify{
		{Kind: config.NotifyWebhook, URL: hang.URL, Timeout: config.Duration(500 * time.Millisecond)},
		{Kind: config.NotifyNtfy, URL: deadURL, Timeout: config.Duration(500 * time.Millisecond)},
	}, Options{Backoff: fastBackoff, OnFailure: func(Failure) { fails.Add(1) }})
	start := time.Now()
	d.Send(Event{Event: Completed})
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("Send blocked for %s", took)
	}
	d.Flush()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a hanging receiver with a 500ms timeout cost %s", took)
	}
	if got := fails.Load(); got != 2 {
		t.Errorf("%d failures, want 2", got)
	}
}

// Flush gives up at FlushWait whatever the targets' timeouts.
func TestFlushBound(t *testing.T) {
	release := make(chan struct{})
	hang := newReceiver(t, func(int, http.ResponseWriter, *http.Request) { <-release })
	defer close(release)
	var fails atomic.Int32
	d := New([]config.Notify{{Kind: config.NotifyWebhook, URL: hang.URL, Timeout: config.Duration(10 * time.Second)}},
		Options{FlushWait: 300 * time.Millisecond, OnFailure: func(Failure) { fails.Add(1) }})
	d.Send(Event{Event: Completed})
	start := time.Now()
	if d.Flush() {
		t.Error("Flush reported everything delivered")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Flush took %s with a 300ms bound", took)
	}
	if fails.Load() != 1 {
		t.Errorf("the abandoned delivery was not reported")
	}
	d.Send(Event{Event: Completed}) // after Flush: dropped, no panic
}

func TestEventsFilter(t *testing.T) {
	rc := newReceiver(t, nil)
	d := New([]config.Notify{{Kind: config.NotifyWebhook, URL: rc.URL, Events: []string{Blocked}}}, Options{})
	d.Send(Event{Event: Completed})
	d.Send(blockedEvent())
	d.Flush()
	if got := rc.requests(); len(got) != 1 || !strings.Contains(got[0].body, `"event":"blocked"`) {
		t.Errorf("got %d requests, want only the blocked one", len(got))
	}
}

func TestNilDispatcher(t *testing.T) {
	d := New(nil, Options{})
	if d != nil {
		t.Fatal("no targets: want a nil dispatcher")
	}
	d.Send(Event{Event: Completed})
	if !d.Flush() {
		t.Error("nil Flush")
	}
}

// A failure's message never names the webhook's path (Slack's is a secret).
func TestFailureHidesURLPath(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(403) })
	var f Failure
	d := New([]config.Notify{{Kind: config.NotifySlack, URL: rc.URL + "/services/T000/B000/secretpath"}},
		Options{OnFailure: func(got Failure) { f = got }})
	d.Send(Event{Event: Failed})
	d.Flush()
	if f.Err == nil || strings.Contains(f.Err.Error()+f.Target, "secretpath") {
		t.Errorf("failure = %+v", f)
	}
}
