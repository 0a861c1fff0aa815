package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/plans"
)

// hooks is a loopback webhook recording the notifications it gets.
type hooks struct {
	*httptest.Server
	mu   sync.Mutex
	evs  []map[string]any
	bods []string
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		h.mu.Lock()
		h.evs, h.bods = append(h.evs, ev), append(h.bods, string(body))
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// The run's end is announced once, with the event its error maps to; a
// failed gate is named but its output (and the secret in it) never sent.
func TestNotifyRunEnd(t *testing.T) {
	t.Parallel()
	const secret = "ghp_Zq8LmN3xT5vB7kR2wY4pA6sD9fG1hJ0cE2uI"
	leaky := plans.Gate{Name: "check", Command: "echo GATE-OUTPUT " + secret + "; false"}
	tests := []struct {
		name    string
		phases  []phaseSpec
		script  script
		cfg     func(*config.Config)
		cancel  string // a tool whose start cancels the run
		wantErr error
		want    string // the event sent
		wantIn  []string
	}{
		{name: "completed", script: script{"1": {{"write a.txt", "done", "result"}}}, want: "completed",
			wantIn: []string{`"exit_code":0`, `"status":"completed"`, "1 completed"}},
		{name: "failed gate", phases: []phaseSpec{{id: "1", gates: []plans.Gate{leaky}}},
			script:  script{"1": {{"done", "result"}, {"done", "result"}}},
			wantErr: ErrPhaseFailed, want: "failed", wantIn: []string{`"phase":"1"`, "failed at phase 1", `"exit_code":1`}},
		{name: "budget exhausted", script: script{"1": {{"write a.txt", "done", "result"}}},
			cfg:     func(c *config.Config) { c.Budget.Phase.Duration = config.Duration(time.Nanosecond) },
			wantErr: ErrBudgetExhausted, want: "budget_exhausted", wantIn: []string{"budget exhausted"}},
		{name: "interrupted", script: script{"1": {{"write a.txt", "block"}}}, cancel: "sleep 1000",
			wantErr: ErrInterrupted, want: "interrupted", wantIn: []string{`"exit_code":130`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.script, tt.phases...)
			h := newHooks(t)
			f.cfg.Notify = []config.Notify{{Kind: config.NotifyWebhook, URL: h.URL}}
			if tt.cfg != nil {
				tt.cfg(&f.cfg)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := f.options()
			if tt.cancel != "" {
				onTool(&opts, tt.cancel, cancel)
			}
			if err := Run(ctx, opts); !errors.Is(err, tt.wantErr) && !(err == nil && tt.wantErr == nil) {
				t.Fatalf("run: %v, want %v\n%s", err, tt.wantErr, f.log)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.evs) != 1 || h.evs[0]["event"] != tt.want {
				t.Fatalf("notifications %v, want one %s", h.bods, tt.want)
			}
			for _, want := range tt.wantIn {
				if !strings.Contains(h.bods[0], want) {
					t.Errorf("the notification lacks %q:\n%s", want, h.bods[0])
				}
			}
			for _, never := range []string{secret, "GATE-OUTPUT"} {
				if strings.Contains(h.bods[0], never) {
					t.Errorf("%q was sent:\n%s", never, h.bods[0])
				}
			}
		})
	}
}
