package gitcommit

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	if r.gitBin == "" {
		return r.walkLedger(head)
	}
	l, err := r.logLedger(ctx, head, plan)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return l, nil
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
		for _, t := range ParseTrailers(string(newest)) {
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

// walkLedger is ReadLedger by go-git: every commit reachable from head.
func (r *Repo) walkLedger(head plumbing.Hash) (*Ledger, error) {
	l := &Ledger{}
	// Read every reachable commit once, remembering only what ordering and
	// outcomes need.
	type node struct {
		parents  []plumbing.Hash
		when     time.Time
		children int
		outcome  *Outcome
	}
	nodes := map[plumbing.Hash]*node{}
	queue := []plumbing.Hash{head}
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if _, ok := nodes[h]; ok {
			continue
		}
		c, err := r.repo.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) && h != head {
			continue // beyond a shallow clone's boundary
		}
		if err != nil {
			return nil, fmt.Errorf("read ledger: read commit %s: %w", Short(h.String()), err)
		}
		n := &node{parents: c.ParentHashes, when: c.Committer.When, outcome: outcomeOf(c)}
		nodes[h] = n
		queue = append(queue, c.ParentHashes...)
	}
	for _, n := range nodes {
		for _, p := range n.parents {
			if pn, ok := nodes[p]; ok {
				pn.children++
			}
		}
	}

	// Kahn's algorithm: a commit is ready once all its reachable children
	// are out; among ready commits the newest committer date goes first.
	ready := &byDate{{head, nodes[head].when}}
	for ready.Len() > 0 {
		e := heap.Pop(ready).(dated)
		n := nodes[e.hash]
		if n.outcome != nil {
			l.Outcomes = append(l.Outcomes, *n.outcome)
		}
		for _, p := range n.parents {
			pn, ok := nodes[p]
			if !ok {
				continue
			}
			if pn.children--; pn.children == 0 {
				heap.Push(ready, dated{p, pn.when})
			}
		}
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

type dated struct {
	hash plumbing.Hash
	when time.Time
}

// byDate is a max-heap on committer date; equal dates by hash, so the
// order does not depend on map iteration.
type byDate []dated

func (b byDate) Len() int { return len(b) }
func (b byDate) Less(i, j int) bool {
	if !b[i].when.Equal(b[j].when) {
		return b[i].when.After(b[j].when)
	}
	return b[i].hash.String() < b[j].hash.String()
}
func (b byDate) Swap(i, j int) { b[i], b[j] = b[j], b[i] }
func (b *byDate) Push(x any)   { *b = append(*b, x.(dated)) }
func (b *byDate) Pop() any {
	old := *b
	x := old[len(old)-1]
	*b = old[:len(old)-1]
	return x
}
