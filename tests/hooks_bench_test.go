package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// BenchmarkRunnerHookOverhead runs the same fake-API session (30 Bash tool
// calls, one per response) with and without the hook callbacks and reports
// the wall-time ratio and the cost per tool call (each call is asked twice:
// PreToolUse and PostToolUse). A report, never an assertion:
//
//	cd tests && go test -run '^$' -bench HookOverhead -benchtime 3x .
func BenchmarkRunnerHookOverhead(b *testing.B) {
	const tools = 30
	bin := claudetest.Bin(b)
	turns := make([]fakeapi.Turn, tools+1)
	for k := range tools {
		turns[k] = fakeapi.Turn{Blocks: []fakeapi.Block{fakeapi.Bash(fmt.Sprintf("echo %d", k))}}
	}
	turns[tools] = fakeapi.Turn{Blocks: []fakeapi.Block{fakeapi.Text("done")}}
	session := func(disable bool) time.Duration {
		srv, err := fakeapi.Start(fakeapi.Script{Conversations: []fakeapi.Conversation{{Match: "bench", Turns: turns}}})
		if err != nil {
			b.Fatalf("start fake api: %v", err)
		}
		defer srv.Close()
		spec := runner.Spec{
			Bin: bin, Model: "claude-sonnet-4-5", PermissionMode: "bypassPermissions",
			Dir: claudetest.GitRepo(b), Env: claudetest.Env(b, srv.URL()),
			LogPath: filepath.Join(b.TempDir(), "session.jsonl"), Prompt: "bench: run the tools",
			IdleTimeout: time.Minute, DisableHooks: disable,
		}
		began := time.Now()
		s, err := runner.Start(context.Background(), spec)
		if err != nil {
			b.Fatalf("start: %v", err)
		}
		hooks := 0
		for ev := range s.Events() {
			if ev.Kind == runner.KindHook {
				hooks++
				ev.Hook.Answer(runner.HookAnswer{})
			}
		}
		out := s.Wait()
		took := time.Since(began)
		if out.Kind != runner.OutcomeCompleted || len(srv.Requests()) != tools+1 {
			b.Fatalf("outcome %s %q after %d requests", out.Kind, out.Reason, len(srv.Requests()))
		}
		if want := 2*tools + 1; !disable && hooks != want {
			b.Fatalf("%d hook calls, want %d", hooks, want)
		}
		return took
	}
	var with, without time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate the order so a warm-up or a load spike does not favour one.
		if i%2 == 0 {
			without += session(true)
			with += session(false)
		} else {
			with += session(false)
			without += session(true)
		}
	}
	b.ReportMetric(float64(with)/float64(without), "ratio")
	b.ReportMetric(float64(with-without)/float64(b.N)/tools/float64(time.Millisecond), "ms/tool")
	b.ReportMetric(float64(without)/float64(b.N)/float64(time.Second), "s/session-no-hooks")
}
