package orchestrator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/state"
)

// Untracked files present at the start are the user's: no commit of the
// run carries them, unless the agent changed them (then the commit says
// so). A run taking over after a crash keeps the dead run's list.
func TestRunLeavesUserFilesOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// dead: a run that died is in the ledger, having recorded the
		// user's files; left.txt is its leftover work.
		dead        bool
		steps       []string
		wantTracked []string
		wantOut     []string // never committed
		wantBody    string   // in some commit's message
	}{
		{
			name:        "the agent's new file is committed, the user's are not",
			steps:       []string{"write a.txt", "done", "result"},
			wantTracked: []string{"a.txt"},
			wantOut:     []string{"notes.txt", "local/key.env"},
		},
		{
			name:        "a user file the agent rewrote is its work, and the commit says so",
			steps:       []string{"write notes.txt", "done", "result"},
			wantTracked: []string{"notes.txt"},
			wantOut:     []string{"local/key.env"},
			wantBody:    "changed by the agent since, so committed as its work:\n  notes.txt",
		},
		{
			name:        "after a crash, the dead run's leftovers without the user's files",
			dead:        true,
			steps:       []string{"done", "result"},
			wantTracked: []string{"left.txt"},
			wantOut:     []string{"notes.txt", "local/key.env"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {tt.steps}})
			f.write("notes.txt", "my notes\n")
			f.write("local/key.env", "API_KEY=secret\n")
			if tt.dead {
				user, err := f.repo.Untracked(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				base, _ := f.repo.Head()
				dead := &state.Run{ID: "20260101-0000-dead", Plan: f.plan.Path, Status: state.StatusRunning, PID: 1 << 22,
					StartedAt: time.Now().Add(-time.Hour),
					Phases:    []*state.PhaseRecord{{ID: "1", Status: state.StatusRunning, Sessions: 1, Attempts: 1, BaseCommit: base}}}
				if err := f.store.Save(&state.Ledger{Runs: []*state.Run{dead}}); err != nil {
					t.Fatal(err)
				}
				if err := f.store.SaveUserFiles(dead.ID, user); err != nil {
					t.Fatal(err)
				}
				f.write("left.txt", "the dead run's work\n")
			}

			if err := f.run(context.Background()); err != nil {
				t.Fatalf("run: %v\n%s", err, f.log)
			}
			tracked := f.tracked()
			for _, p := range tt.wantTracked {
				if !slices.Contains(tracked, p) {
					t.Errorf("%s not committed; HEAD has %v", p, tracked)
				}
			}
			var messages strings.Builder
			for _, c := range f.commits() {
				messages.WriteString(c.Message)
				files, err := c.Files()
				if err != nil {
					t.Fatal(err)
				}
				_ = files.ForEach(func(file *object.File) error {
					if slices.Contains(tt.wantOut, file.Name) {
						t.Errorf("commit %q carries the user's %s", c.Message, file.Name)
					}
					return nil
				})
			}
			if !strings.Contains(messages.String(), tt.wantBody) {
				t.Errorf("no commit message says %q:\n%s", tt.wantBody, messages.String())
			}
			if log := f.log.String(); !tt.dead && !strings.Contains(log, "untracked files found at the start are yours") {
				t.Errorf("the start does not say the user's files are left out:\n%s", log)
			}
			if _, ok, _ := f.store.LoadUserFiles(f.lastRun().ID); !ok {
				t.Error("the run did not record the user's files")
			}
		})
	}
}

// A repository without a commit is refused by Run and Check alike: every
// file in it is the user's.
func TestRefuseRepositoryWithoutCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"done", "result"}}})
	empty := t.TempDir()
	if _, err := git.PlainInit(empty, false); err != nil {
		t.Fatal(err)
	}
	repo, err := gitcommit.Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	opts := f.options()
	opts.Repo = repo
	_, cerr := Check(opts)
	rerr := Run(context.Background(), opts)
	for name, err := range map[string]error{"Check": cerr, "Run": rerr} {
		if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "has no commit yet") {
			t.Errorf("%s = %v, want ErrSetup saying there is no commit yet", name, err)
		}
	}
	if l := f.ledger(); len(l.Runs) != 0 {
		t.Errorf("a refused run was recorded: %+v", l.Runs[0])
	}
}
