package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseTrailersMatchesGit(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want int // trailers expected, as a check on the oracle
	}{
		{"debussy message", Message{Subject: "debussy: phase 1", Run: "r", Phase: "1", Event: "completed", Sessions: 2, Restarts: 1, Reason: "x"}.String(), 7},
		{"subject only", "Debussy-Event: completed\n", 0},
		{"subject and trailers only", "subject\n\nDebussy-Phase: 1\nDebussy-Event: failed\n", 2},
		{"trailers not in the last paragraph", "subject\n\nDebussy-Phase: 1\n\nsome closing words\n", 0},
		{"a prose line in the block", "subject\n\nDebussy-Phase: 1\nand some prose\n", 0},
		{"signed-off-by lets prose in", "subject\n\nDebussy-Phase: 1\nprose here\nSigned-off-by: A <a@b>\n", 2},
		{"quarter rule fails", "subject\n\nSigned-off-by: A <a@b>\none\ntwo\nthree\nfour\n", 0},
		{"continuation lines", "subject\n\nDebussy-Reason: a long\n  reason folded\n\tover lines\nDebussy-Phase: 2\n", 2},
		{"blank before colon", "subject\n\nDebussy-Phase : 3\nKey\t: v\n", 2},
		{"no space after colon", "subject\n\nDebussy-Phase:4\n", 1},
		{"url counts as a trailer", "subject\n\nhttps://example.com/x\nDebussy-Phase: 5\n", 2},
		{"comment lines ignored", "subject\n\nDebussy-Phase: 6\n# a comment\nDebussy-Event: blocked\n", 2},
		{"trailing blank lines", "subject\n\nDebussy-Phase: 7\n\n\n  \n", 1},
		{"crlf", "subject\r\n\r\nDebussy-Phase: 8\r\nDebussy-Event: completed\r\n", 2},
		{"hook appended change-id", Message{Subject: "s", Phase: "9", Event: "failed"}.String() + "Change-Id: I123\n", 6},
		{"key with a space is prose", "subject\n\nDebussy Phase: 1\n", 0},
	}
	isolate(t)
	dir := newRepo(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, tr := range ParseTrailers(tt.msg) {
				got = append(got, tr.Key+": "+tr.Value)
			}
			oracle := strings.TrimRight(runGitStdin(t, dir, tt.msg, "interpret-trailers", "--parse"), "\n")
			if strings.Join(got, "\n") != oracle {
				t.Errorf("ParseTrailers:\n%s\ngit interpret-trailers --parse:\n%s", strings.Join(got, "\n"), oracle)
			}
			if len(got) != tt.want {
				t.Errorf("%d trailers, want %d", len(got), tt.want)
			}
		})
	}
}

func TestCommitAllowEmpty(t *testing.T) {
	tests := []struct {
		name    string
		hook    string // pre-commit hook body, if any
		opts    []CommitOption
		wantErr func(error) bool
	}{
		{"without the option nothing to commit", "", nil, func(err error) bool { return errors.Is(err, ErrNothingToCommit) }},
		{"empty commit", "", []CommitOption{AllowEmpty()}, nil},
		{"hooks still run", "exit 1", []CommitOption{AllowEmpty()}, func(err error) bool {
			var h *HookError
			return errors.As(err, &h) && h.Hook == "pre-commit"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := baseRepo(t)
			if tt.hook != "" {
				writeFiles(t, dir, map[string]string{".git/hooks/pre-commit": "#!/bin/sh\n" + tt.hook + "\n"})
				must(t, os.Chmod(filepath.Join(dir, ".git/hooks/pre-commit"), 0o755))
			}
			before := runGit(t, dir, "rev-parse", "HEAD")
			c, err := mustOpen(t, dir).CommitAll(context.Background(), Message{Subject: "s", Phase: "1", Event: "completed"}.String(), tt.opts...)
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				if after := runGit(t, dir, "rev-parse", "HEAD"); after != before {
					t.Errorf("HEAD moved to %s", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Files != 0 || runGit(t, dir, "rev-parse", "HEAD^") != before {
				t.Errorf("commit %+v is not an empty child of %s", c, before)
			}
			if a, b := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, dir, "rev-parse", "HEAD^^{tree}"); a != b {
				t.Errorf("tree changed: %s → %s", b, a)
			}
			if st := runGit(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("status after commit:\n%s", st)
			}
		})
	}
}

// ledgerCommit makes an empty commit with msg at committer date day (days
// after 2026-01-01), so ordering by date can be tested against topology.
func ledgerCommit(t *testing.T, dir string, day int, m Message) {
	t.Helper()
	date := time.Date(2026, 1, 1+day, 12, 0, 0, 0, time.UTC).Format(time.RFC3339)
	cmd := gitCmd(dir, "commit", "-q", "--allow-empty", "-m", m.String())
	cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE="+date, "GIT_AUTHOR_DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
}

func outcome(phase, event string) Message {
	return Message{Subject: "debussy: phase " + phase + " — " + event, Run: "r", Plan: "plan.md", Phase: phase, Event: event, Sessions: 1}
}

func TestReadLedger(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T, dir string)
		plan  string
		want  map[string]string // phase → event of the latest outcome; "" means none
	}{
		{"no debussy commits", func(t *testing.T, dir string) {}, "plan.md", map[string]string{"1": ""}},
		{"linear", func(t *testing.T, dir string) {
			ledgerCommit(t, dir, 1, outcome("1", "completed"))
			ledgerCommit(t, dir, 2, outcome("2", "failed"))
		}, "plan.md", map[string]string{"1": "completed", "2": "failed", "3": ""}},
		{"the later outcome wins", func(t *testing.T, dir string) {
			ledgerCommit(t, dir, 1, outcome("1", "failed"))
			ledgerCommit(t, dir, 2, outcome("1", "completed"))
			ledgerCommit(t, dir, 3, outcome("2", "completed"))
			ledgerCommit(t, dir, 4, outcome("2", "blocked"))
		}, "plan.md", map[string]string{"1": "completed", "2": "blocked"}},
		{"restarts are not outcomes", func(t *testing.T, dir string) {
			ledgerCommit(t, dir, 1, outcome("1", "completed"))
			ledgerCommit(t, dir, 2, outcome("1", "restart"))
			ledgerCommit(t, dir, 3, outcome("2", "retry"))
		}, "plan.md", map[string]string{"1": "completed", "2": ""}},
		{"a descendant wins over a later date", func(t *testing.T, dir string) {
			ledgerCommit(t, dir, 9, outcome("1", "failed"))
			ledgerCommit(t, dir, 1, outcome("1", "completed")) // skewed clock
		}, "plan.md", map[string]string{"1": "completed"}},
		{"merged branches both count", func(t *testing.T, dir string) {
			ledgerCommit(t, dir, 1, outcome("1", "completed"))
			runGit(t, dir, "checkout", "-q", "-b", "p2")
			ledgerCommit(t, dir, 2, outcome("2", "completed"))
			runGit(t, dir, "checkout", "-q", "main")
			runGit(t, dir, "checkout", "-q", "-b", "p3")
			ledgerCommit(t, dir, 3, outcome("3", "completed"))
			runGit(t, dir, "checkout", "-q", "main")
			runGit(t, dir, "merge", "-q", "--no-ff", "-m", "merge p2", "p2")
			runGit(t, dir, "merge", "-q", "--no-ff", "-m", "merge p3", "p3")
		}, "plan.md", map[string]string{"1": "completed", "2": "completed", "3": "completed"}},
		{"unmerged branches do not count", func(t *testing.T, dir string) {
			ledgerCommit(t, dir, 1, outcome("1", "completed"))
			runGit(t, dir, "checkout", "-q", "-b", "p2")
			ledgerCommit(t, dir, 2, outcome("2", "completed"))
			runGit(t, dir, "checkout", "-q", "main")
		}, "plan.md", map[string]string{"1": "completed", "2": ""}},
		{"other plans do not count", func(t *testing.T, dir string) {
			m := outcome("1", "completed")
			m.Plan = "other.md"
			ledgerCommit(t, dir, 1, m)
			m = outcome("2", "completed")
			m.Plan = "" // before Debussy-Plan existed
			ledgerCommit(t, dir, 2, m)
		}, "plan.md", map[string]string{"1": "", "2": "completed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := baseRepo(t)
			tt.build(t, dir)
			l, err := mustOpen(t, dir).ReadLedger(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			for phase, want := range tt.want {
				o, ok := l.Latest(tt.plan, phase)
				if got := o.Event; got != want || ok != (want != "") {
					t.Errorf("phase %s: latest %q (found %v), want %q", phase, got, ok, want)
				}
			}
		})
	}
}

func TestReadLedgerFields(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	m := Message{Subject: "debussy: phase 2 — blocked", Run: "20260101-r", Plan: "docs/MASTER.md", Phase: "2", Event: "blocked",
		Session: 3, Sessions: 4, Restarts: 2, Reason: "needs\nAPI access"}
	ledgerCommit(t, dir, 5, m)
	l, err := mustOpen(t, dir).ReadLedger(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	o, ok := l.Latest("docs/MASTER.md", "2")
	head := runGit(t, dir, "rev-parse", "HEAD")
	want := Outcome{Plan: "docs/MASTER.md", Phase: "2", Event: "blocked", Commit: head, Run: "20260101-r", Sessions: 4, Restarts: 2,
		Reason: "needs API access", When: time.Date(2026, 1, 6, 12, 0, 0, 0, time.UTC)}
	if !ok || fmt.Sprint(o.When.UTC()) != fmt.Sprint(want.When) {
		t.Fatalf("outcome %+v, want %+v", o, want)
	}
	o.When = want.When
	if o != want {
		t.Errorf("outcome\n%+v\nwant\n%+v", o, want)
	}
}

func TestReadLedgerEdges(t *testing.T) {
	t.Run("unborn branch", func(t *testing.T) {
		isolate(t)
		l, err := mustOpen(t, newRepo(t)).ReadLedger(context.Background(), "")
		if err != nil || len(l.Outcomes) != 0 {
			t.Fatalf("ledger %+v, err %v", l, err)
		}
	})
	t.Run("shallow clone ends at its boundary", func(t *testing.T) {
		isolate(t)
		dir := baseRepo(t)
		ledgerCommit(t, dir, 1, outcome("1", "completed"))
		ledgerCommit(t, dir, 2, outcome("2", "completed"))
		clone := filepath.Join(t.TempDir(), "clone")
		runGit(t, t.TempDir(), "clone", "-q", "--depth", "1", "file://"+dir, clone)
		l, err := mustOpen(t, clone).ReadLedger(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := l.Latest("plan.md", "2"); !ok {
			t.Error("HEAD's outcome missing")
		}
		if _, ok := l.Latest("plan.md", "1"); ok {
			t.Error("an outcome beyond the shallow boundary was read")
		}
	})
}

// No phase of a plan ends before the plan exists: outcomes older than the
// commit that added it are not read, with git and the plan named or found
// from the newest outcome; go-git (no git) walks the whole history.
func TestReadLedgerStartsAtThePlan(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	ledgerCommit(t, dir, 1, outcome("1", "failed")) // before plan.md existed
	writeFiles(t, dir, map[string]string{"plan.md": "# plan\n"})
	runGit(t, dir, "add", "plan.md")
	runGit(t, dir, "commit", "-q", "-m", "add the plan")
	ledgerCommit(t, dir, 3, outcome("2", "completed"))
	for _, tc := range []struct {
		name, plan string
		opts       []Option
		want1      bool
	}{
		{"named", "plan.md", nil, false},
		{"from the newest outcome", "", nil, false},
		{"without git", "plan.md", []Option{withoutGit()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := mustOpen(t, dir, tc.opts...).ReadLedger(context.Background(), tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := l.Latest("plan.md", "2"); !ok {
				t.Errorf("phase 2's outcome, after the plan, is missing: %+v", l.Outcomes)
			}
			if _, ok := l.Latest("plan.md", "1"); ok != tc.want1 {
				t.Errorf("phase 1's outcome from before the plan: found %v, want %v", ok, tc.want1)
			}
		})
	}
}
