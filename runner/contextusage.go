package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/event"
)

// contextUsageTimeout bounds how long a get_context_usage request may stay
// unanswered before the runner logs it as lost. Nothing waits for the
// answer: the session runs meanwhile and consumers keep their fallback.
const contextUsageTimeout = 15 * time.Second

// contextUsagePrefix starts the request_id of every get_context_usage
// request, so its control_response is recognised when parsed.
const contextUsagePrefix = "ctx_"

// maxContextAsks caps the requests of one session: a model name that keeps
// changing (or a CLI reporting two spellings of one model) cannot make the
// runner ask without end.
const maxContextAsks = 4

// The context types live in the event package; these names keep the
// runner's API.
type (
	ContextUsage    = event.ContextUsage
	ContextCategory = event.ContextCategory
	KnownContext    = event.KnownContext
)

// contextUsageWire is the "response" of a get_context_usage answer.
// gridRows, skills, messageBreakdown, ... are left undecoded.
type contextUsageWire struct {
	Model                string  `json:"model"`
	TotalTokens          integer `json:"totalTokens"`
	MaxTokens            integer `json:"maxTokens"`
	RawMaxTokens         integer `json:"rawMaxTokens"`
	Percentage           float   `json:"percentage"`
	AutocompactSource    string  `json:"autocompactSource"`
	AutoCompactThreshold integer `json:"autoCompactThreshold"`
	IsAutoCompactEnabled *bool   `json:"isAutoCompactEnabled"`
	Categories           []struct {
		ID     string  `json:"id"`
		Name   string  `json:"name"`
		Kind   string  `json:"kind"`
		Tokens integer `json:"tokens"`
	} `json:"categories"`
}

// contextUsageEvent fills ev from a control_response to one of our
// get_context_usage requests.
func contextUsageEvent(ev *Event, reqID, subtype, errText string, w *contextUsageWire) {
	ev.Kind = KindContextUsage
	cu := &ContextUsage{RequestID: reqID}
	ev.ContextUsage = cu
	if subtype != "success" {
		cu.Error = "claude refused get_context_usage: " + cmpOr(errText, subtype)
		return
	}
	cu.Model = w.Model
	cu.TotalTokens, cu.MaxTokens, cu.RawMaxTokens = int64(w.TotalTokens), int64(w.MaxTokens), int64(w.RawMaxTokens)
	cu.Percentage = float64(w.Percentage)
	cu.AutocompactSource = w.AutocompactSource
	cu.AutoCompactThreshold = int64(w.AutoCompactThreshold)
	cu.AutoCompactEnabled = w.IsAutoCompactEnabled
	for _, c := range w.Categories {
		if c.Name != "" || c.ID != "" {
			cu.Categories = append(cu.Categories, ContextCategory{ID: c.ID, Name: c.Name, Kind: c.Kind, Tokens: int64(c.Tokens)})
		}
	}
	if cu.MaxTokens <= 0 {
		cu.Error = "claude's get_context_usage answer has no maxTokens"
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// contextUsageRequest is the control request line with id reqID.
func contextUsageRequest(reqID string) []byte {
	return []byte(`{"type":"control_request","request_id":"` + reqID + `","request":{"subtype":"get_context_usage"}}` + "\n")
}

// contextAsker decides when to ask the CLI about its context: once at the
// start unless an earlier session's answer is known for this CLI (asked
// again at init if the version or model differ), and again when the stream
// shows another model than the last answer's. It is owned by the supervise
// goroutine.
type contextAsker struct {
	n       int                  // requests sent
	pending map[string]time.Time // request id → when sent
	model   string               // model of the last answer, or the model asked about
	asked   map[string]bool      // normalised models asked about
	known   *KnownContext        // Spec.KnownContext, until init shows another CLI or model
}

// start returns the request to write before the first message, or nil
// when known answers it.
func (a *contextAsker) start(now time.Time, model string, known *KnownContext) []byte {
	if known == nil || !known.Usage.OK() {
		return a.next(now, model)
	}
	a.known, a.model = known, known.Usage.Model
	a.pending, a.asked = map[string]time.Time{}, map[string]bool{normModel(known.Model): true, normModel(known.Usage.Model): true}
	return nil
}

// lateError is the Error of a request left unanswered: consumers stop
// waiting for the window and judge their fallback.
const lateError = "claude did not answer get_context_usage"

// lateEvent is the event for a request unanswered too long.
func lateEvent(id string, at time.Time) Event {
	return Event{Kind: KindContextUsage, At: at, ContextUsage: &ContextUsage{RequestID: id,
		Error: fmt.Sprintf("%s within %s", lateError, contextUsageTimeout)}}
}

// next returns a new request line and records it.
func (a *contextAsker) next(now time.Time, model string) []byte {
	a.n++
	id := fmt.Sprintf("%s%d", contextUsagePrefix, a.n)
	if a.pending == nil {
		a.pending, a.asked = map[string]time.Time{}, map[string]bool{}
	}
	a.pending[id] = now
	if model != "" {
		a.asked[normModel(model)] = true
	}
	return contextUsageRequest(id)
}

// observe looks at one event at now. It returns a request line to write
// (nil for none) and the ids of requests left unanswered too long, which it
// forgets: the consumer keeps its fallback, and nothing waited meanwhile.
func (a *contextAsker) observe(ev *Event, now time.Time) (write []byte, late []string) {
	for id, at := range a.pending {
		if now.Sub(at) >= contextUsageTimeout {
			delete(a.pending, id)
			late = append(late, id)
		}
	}
	if ev == nil {
		return nil, late
	}
	var seen string
	switch ev.Kind {
	case KindContextUsage:
		if _, ok := a.pending[ev.ContextUsage.RequestID]; ok {
			delete(a.pending, ev.ContextUsage.RequestID)
			if ev.ContextUsage.Model != "" {
				a.model = ev.ContextUsage.Model
				a.asked[normModel(a.model)] = true
			}
		}
		return nil, late
	case KindInit:
		seen = ev.Init.Model
		if k := a.known; k != nil && !k.Matches(ev.Init.Version, ev.Init.Model) && a.n < maxContextAsks {
			a.known = nil // another CLI or model than the answer's
			a.model = seen
			return a.next(now, seen), late
		}
	case KindAssistant:
		// A fallback model shows on the main thread's responses first.
		if ev.Assistant.MainThread() && ev.Assistant.Error == "" {
			seen = ev.Assistant.Model
		}
	}
	if seen == "" || a.model == "" || a.n >= maxContextAsks || a.asked[normModel(seen)] {
		return nil, late
	}
	a.model = seen
	return a.next(now, seen), late
}

// normModel compares model names across the spellings the CLI uses: the
// init line says "claude-opus-4-8[1m]" where a response says
// "claude-opus-4-8".
func normModel(m string) string {
	m = strings.ToLower(strings.TrimSpace(m))
	if i := strings.IndexByte(m, '['); i > 0 {
		m = m[:i]
	}
	return m
}
