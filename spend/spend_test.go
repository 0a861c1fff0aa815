package spend

import (
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/state"
)

// With --parallel the plan's budget sees sessions of several phases at
// once. Each session's result carries modelUsage cumulative over its own
// process, so one Accountant fed two processes replaced one's count with
// the other's (or counted a session twice when another phase's session
// started or ended meanwhile): the plan budget drifted from the phases' sum
// and a strict plan budget could stop too late or never.
func TestPlanBudgetConcurrentSessions(t *testing.T) {
	const model = "claude-sonnet-4-5"
	call := func(id string, tokens int64) event.Event {
		return event.Event{Kind: event.KindAssistant, Assistant: &event.Assistant{MessageID: id, Model: model,
			Usage: event.Usage{InputTokens: tokens, OutputTokens: 1}, Text: "x"}}
	}
	result := func(tokens int64) event.Event {
		return event.Event{Kind: event.KindResult, Result: &event.Result{Subtype: "success",
			ModelUsage: map[string]event.ModelUsage{model: {InputTokens: tokens, OutputTokens: 1}}}}
	}
	type op struct {
		phase string
		what  string // start, end, or an event
		ev    event.Event
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"both results before either end", []op{
			{"1", "start", event.Event{}}, {"2", "start", event.Event{}},
			{"1", "", call("a1", 40_000)}, {"2", "", call("b1", 30_000)},
			{"1", "", result(40_000)}, {"2", "", result(30_000)},
			{"1", "end", event.Event{}}, {"2", "end", event.Event{}},
		}},
		{"a session starts while another has counted calls", []op{
			{"1", "start", event.Event{}}, {"1", "", call("a1", 40_000)},
			{"2", "start", event.Event{}}, {"2", "", call("b1", 30_000)},
			{"1", "", result(40_000)}, {"1", "end", event.Event{}},
			{"2", "", result(30_000)}, {"2", "end", event.Event{}},
		}},
		{"a session ends while another runs", []op{
			{"1", "start", event.Event{}}, {"2", "start", event.Event{}},
			{"1", "", call("a1", 40_000)}, {"2", "", call("b1", 30_000)},
			{"2", "", result(30_000)}, {"2", "end", event.Event{}},
			{"1", "", call("a2", 45_000)}, {"1", "", result(85_000)}, {"1", "end", event.Event{}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Budget.Enforcement = config.EnforceSoft
			cfg.Budget.Plan.Tokens = 10_000_000
			now := time.Now()
			run := &state.Run{ID: "r", StartedAt: now}
			a := New(cfg.Budget, now)
			phases := map[string]*Phase{}
			recs := map[string]*state.PhaseRecord{}
			for _, id := range []string{"1", "2"} {
				rec := &state.PhaseRecord{ID: id, StartedAt: now}
				run.Phases = append(run.Phases, rec)
				phases[id], recs[id] = a.Phase(rec, nil), rec
			}
			// What the recorder does with a phase's figures (recorder.Spend).
			record := func(id string) {
				ec, tokens, cost := phases[id].Figures(now)
				recs[id].Economics, recs[id].Tokens, recs[id].CostUSD = &ec, tokens, cost
			}
			for _, o := range tt.ops {
				p := phases[o.phase]
				switch o.what {
				case "start":
					p.StartSession()
				case "end":
					p.EndSession()
					record(o.phase)
					a.RecordRun(run, now)
				default:
					p.Observe(o.ev)
					p.Check(now)
					record(o.phase)
					a.RecordRun(run, now)
				}
			}
			var sum int64
			for _, p := range phases {
				sum += p.Totals().Processed()
			}
			a.mu.Lock()
			got := a.planMeter().Totals().Processed()
			a.mu.Unlock()
			if got != sum {
				t.Fatalf("plan budget counted %d tokens, the phases %d", got, sum)
			}
			if want := 100*float64(sum)/10_000_000 + 0.05; run.Economics == nil || run.Economics.UsedPct > want || run.Economics.UsedPct < want-0.1 {
				t.Fatalf("run economics %+v, want used %.1f %%", run.Economics, want)
			}
		})
	}
}
