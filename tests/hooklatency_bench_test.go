package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// BenchmarkHookAnswerLatency runs a 60-tool session on the real CLI and
// answers every hook the way debussy's session reader does (estimator, then
// policy, from memory), and reports how long the CLI waited for the
// answers, per hook, as the runner measured it (Outcome.HookLatency): p50
// and p99 in ms. A report, never an assertion (goal: p99 under 5 ms):
//
//	cd tests && go test -run '^$' -bench HookAnswerLatency -benchtime 3x .
func BenchmarkHookAnswerLatency(b *testing.B) {
	const tools = 60
	bin := claudetest.Bin(b)
	turns := make([]fakeapi.Turn, tools+1)
	for k := range tools {
		turns[k] = fakeapi.Turn{Usage: fakeapi.Usage{Input: 10, CacheRead: int64(20000 + k*500)},
			Blocks: []fakeapi.Block{fakeapi.Bash(fmt.Sprintf("echo %d", k%7))}}
	}
	turns[tools] = fakeapi.Turn{Blocks: []fakeapi.Block{fakeapi.Text("done")}}
	// Per session and hook, the runner's p50 and p99.
	p50s, p99s := map[runner.HookEvent][]time.Duration{}, map[runner.HookEvent][]time.Duration{}
	for b.Loop() {
		srv, err := fakeapi.Start(fakeapi.Script{Conversations: []fakeapi.Conversation{{Match: "bench", Turns: turns}}})
		if err != nil {
			b.Fatalf("start fake api: %v", err)
		}
		dir := claudetest.GitRepo(b)
		s, err := runner.Start(context.Background(), runner.Spec{
			Bin: bin, Model: "claude-sonnet-4-5", PermissionMode: "bypassPermissions",
			Dir: dir, Env: claudetest.Env(b, srv.URL()),
			LogPath: filepath.Join(b.TempDir(), "session.jsonl"), Prompt: "bench: run the tools", IdleTimeout: time.Minute,
		})
		if err != nil {
			b.Fatalf("start: %v", err)
		}
		est := estimator.New(estimator.Config{})
		pol := policy.New(policy.Config{Phase: "1", ContextThreshold: 80, MaxRestarts: 3, Handoff: true,
			HandoffPath: filepath.Join(dir, "handoff-1.md"), Root: dir,
			Nudges: estimator.NudgeConfig{Repeat: 3, RepeatWindow: 20, RepeatRestart: 5, ExploreReads: 10, Cooldown: 5}}, nil)
		for ev := range s.Events() {
			snap := est.Observe(ev)
			pol.Observe(ev, snap)
			if h := ev.Hook; ev.Kind == runner.KindHook && h != nil {
				switch h.Event {
				case runner.HookPreToolUse:
					h.Answer(pol.PreToolUse(policy.CallOf(h), ""))
				case runner.HookPostToolUse:
					h.Answer(pol.PostToolUse(policy.CallOf(h)))
				case runner.HookStop:
					h.Answer(pol.Stop(h.StopHookActive, true))
				default:
					h.Answer(pol.PreCompact(h.Trigger))
				}
			}
			pol.Effects()
		}
		out := s.Wait()
		srv.Close()
		for ev, l := range out.HookLatency {
			p50s[ev] = append(p50s[ev], l.P50)
			p99s[ev] = append(p99s[ev], l.P99)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, ev := range []runner.HookEvent{runner.HookPreToolUse, runner.HookPostToolUse} {
		if len(p50s[ev]) == 0 {
			b.Fatalf("no %s answers measured", ev)
		}
		// The median session's p50 and p99, and the worst session's p99
		// (the first session pays the process's warm-up).
		slices.Sort(p50s[ev])
		slices.Sort(p99s[ev])
		b.ReportMetric(ms(p50s[ev][len(p50s[ev])/2]), string(ev)+"-p50-ms")
		b.ReportMetric(ms(p99s[ev][len(p99s[ev])/2]), string(ev)+"-p99-ms")
		b.ReportMetric(ms(slices.Max(p99s[ev])), string(ev)+"-p99-worst-ms")
	}
}
