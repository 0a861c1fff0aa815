package gitcommit

import (
	"container/heap"
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

// ReadLedger reads the phase outcomes recorded in every commit reachable
// from HEAD — through all parents of merges, since phases completed on
// other branches arrive by merge — newest first. "Newest" is git's
// --topo-order: a commit always comes before its ancestors, and among
// unrelated commits the later committer date first. A branch without a
// commit has an empty ledger. History cut short by a shallow clone ends
// where the objects end: the ledger then misses what lies beyond.
func (r *Repo) ReadLedger() (*Ledger, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer end()
	head, err := r.headHash()
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return r.readLedger(head)
}

// LedgerAt is ReadLedger from the commit ref names (a full ref name such as
// refs/remotes/origin/debussy/plan/phase-2) instead of HEAD: what a branch
// that is not checked out says about phases. A ref that does not exist has
// an empty ledger.
func (r *Repo) LedgerAt(ref string) (*Ledger, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s: %w", ref, err)
	}
	defer end()
	h, err := r.refHash(ref)
	if err != nil {
		return nil, fmt.Errorf("read ledger of %s: %w", ref, err)
	}
	return r.readLedger(h)
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

// readLedger reads the outcomes reachable from head (zero: none).
func (r *Repo) readLedger(head plumbing.Hash) (*Ledger, error) {
	l := &Ledger{}
	if head.IsZero() {
		return l, nil
	}

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
