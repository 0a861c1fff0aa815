package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Outcome is how a phase ended, read back from a debussy commit's
// trailers (see Message).
type Outcome struct {
	Plan     string    `json:"plan,omitempty"` // Debussy-Plan; "" from commits that predate it
	Phase    string    `json:"phase"`
	Event    string    `json:"event"` // completed, failed, blocked or interrupted
	Commit   string    `json:"commit"`
	Run      string    `json:"run,omitempty"`
	Sessions int       `json:"sessions"`
	Restarts int       `json:"restarts"`
	Reason   string    `json:"reason,omitempty"`
	When     time.Time `json:"when"` // committer date
}

// Ledger is what git history says about phases: every outcome commit
// reachable from HEAD, newest first.
type Ledger struct {
	Outcomes []Outcome
}

// Latest returns the newest outcome of phase in plan (a repository-relative
// path; outcomes written without a Debussy-Plan trailer match any plan).
func (l *Ledger) Latest(plan, phase string) (Outcome, bool) {
	if l == nil {
		return Outcome{}, false
	}
	for _, o := range l.Outcomes {
		if o.Phase == phase && (o.Plan == "" || o.Plan == plan) {
			return o, true
		}
	}
	return Outcome{}, false
}

// ReadLedger reads the phase outcomes recorded in the commits reachable
// from HEAD — through all parents of merges, since phases completed on
// other branches arrive by merge — newest first, in git's --topo-order (a
// commit before its ancestors; among unrelated commits the later committer
// date first). A branch without a commit has an empty ledger.
//
// No phase can end before its plan exists, so where git is installed only
// the history since the commit that added plan (a repository-relative path;
// "" is the plan of the newest outcome) is read, by `git log --grep`: the
// cost follows the plan's commits, not the repository's age. Without git,
// or when the plan is in no commit, the whole history is walked. History
// cut short by a shallow clone ends where the objects end.
func (r *Repo) ReadLedger(ctx context.Context, plan string) (*Ledger, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer end()
	head, err := r.headHash()
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	if head.IsZero() {
		return &Ledger{}, nil
	}
	l, err := r.ledgerFrom(ctx, head, plan)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return l, nil
}

// LedgerAt is ReadLedger from the commit ref names (a full ref name such as
// refs/remotes/origin/debussy/plan/phase-2) instead of HEAD: what a branch
// that is not checked out says about phases. A ref that does not exist has
// an empty ledger.
func (r *Repo) LedgerAt(ctx context.Context, ref, plan string) (*Ledger, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s: %w", ref, err)
	}
	defer end()
	h, err := r.refHash(ref)
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s: %w", ref, err)
	}
	if h.IsZero() {
		return &Ledger{}, nil
	}
	l, err := r.ledgerFrom(ctx, h, plan)
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s: %w", ref, err)
	}
	return l, nil
}

// RefHash returns the commit a full ref name points to, "" when there is
// no such ref.
func (r *Repo) RefHash(ref string) (string, error) {
	end, err := r.begin()
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ref, err)
	}
	defer end()
	h, err := r.refHash(ref)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// refHash resolves a full ref name (symbolic refs followed); zero when it
// does not exist.
func (r *Repo) refHash(ref string) (plumbing.Hash, error) {
	got, err := r.store.Reference(plumbing.ReferenceName(ref))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", ref, err)
	}
	if got.Type() == plumbing.SymbolicReference {
		if got, err = r.repo.Reference(got.Name(), true); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read %s: %w", ref, err)
		}
	}
	return got.Hash(), nil
}

// ledgerFrom reads the outcomes reachable from head, by git where it is
// installed (from the plan's commit on), else by go-git.
func (r *Repo) ledgerFrom(ctx context.Context, head plumbing.Hash, plan string) (*Ledger, error) {
	if r.gitBin == "" {
		return r.walkLedger(head)
	}
	return r.logLedger(ctx, head, plan)
}

// logLedger is ReadLedger by git.
func (r *Repo) logLedger(ctx context.Context, head plumbing.Hash, plan string) (*Ledger, error) {
	logArgs := []string{"log", "-z", "--topo-order", "--format=%H%n%cI%n%B", "--grep=^Debussy-Event:", head.String()}
	if plan == "" {
		newest, err := r.git(ctx, gitRun{}, append(logArgs, "-1")...)
		if err != nil {
			return nil, err
		}
		if len(newest) == 0 {
			return &Ledger{}, nil // no debussy commit at all
		}
		for _, t := range ParseTrailers(strings.TrimRight(string(newest), "\x00\n")) {
			if strings.EqualFold(t.Key, "debussy-plan") {
				plan = t.Value
			}
		}
	}
	if plan != "" {
		added, err := r.git(ctx, gitRun{}, "log", "-1", "--format=%H", "--diff-filter=A", head.String(), "--", ":(top,literal)"+plan)
		if err != nil {
			return nil, err
		}
		if h := strings.TrimSpace(string(added)); h != "" {
			logArgs = append(logArgs, "^"+h+"^@") // from the plan's commit on
		}
	}
	out, err := r.git(ctx, gitRun{}, logArgs...)
	if err != nil {
		return nil, err
	}
	return parseLog(out), nil
}

// parseLog reads `git log -z --format=%H%n%cI%n%B` into outcomes.
func parseLog(out []byte) *Ledger {
	l := &Ledger{}
	for _, rec := range strings.Split(string(out), "\x00") {
		hash, rest, _ := strings.Cut(rec, "\n")
		date, msg, _ := strings.Cut(rest, "\n")
		when, err := time.Parse(time.RFC3339, date)
		if err != nil || !plumbing.IsHash(hash) {
			continue
		}
		c := &object.Commit{Hash: plumbing.NewHash(hash), Message: msg, Committer: object.Signature{When: when}}
		if o := outcomeOf(c); o != nil {
			l.Outcomes = append(l.Outcomes, *o)
		}
	}
	return l
}

// walkLedger is ReadLedger by go-git: every commit reachable from head,
// newest committer date first (go-git has no --topo-order: a skewed clock
// can misorder outcomes, a documented difference of go-git mode).
func (r *Repo) walkLedger(head plumbing.Hash) (*Ledger, error) {
	l := &Ledger{}
	it, err := r.repo.Log(&git.LogOptions{From: head, Order: git.LogOrderCommitterTime})
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	err = it.ForEach(func(c *object.Commit) error {
		if o := outcomeOf(c); o != nil {
			l.Outcomes = append(l.Outcomes, *o)
		}
		return nil
	})
	if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) { // a shallow clone ends there
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return l, nil
}

// outcomeOf reads the outcome a debussy commit records, or nil.
func outcomeOf(c *object.Commit) *Outcome {
	if !strings.Contains(strings.ToLower(c.Message), "debussy-event") {
		return nil // most commits: skip the parse
	}
	o := Outcome{Commit: c.Hash.String(), When: c.Committer.When}
	for _, t := range ParseTrailers(c.Message) {
		switch strings.ToLower(t.Key) {
		case "debussy-plan":
			o.Plan = t.Value
		case "debussy-phase":
			o.Phase = t.Value
		case "debussy-event":
			o.Event = t.Value
		case "debussy-run":
			o.Run = t.Value
		case "debussy-sessions":
			o.Sessions, _ = strconv.Atoi(t.Value)
		case "debussy-restarts":
			o.Restarts, _ = strconv.Atoi(t.Value)
		case "debussy-reason":
			o.Reason = t.Value
		}
	}
	if o.Phase == "" || !IsOutcome(o.Event) {
		return nil
	}
	return &o
}
