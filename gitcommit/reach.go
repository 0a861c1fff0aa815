package gitcommit

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// Reachable reports which of hashes (full hex) are HEAD or its ancestors,
// through every parent of a merge. What .debussy/ remembers about a commit
// counts only while git still has it on the branch: after a reset past it,
// it is not. A hash that is not a commit here is not reachable. The walk
// stops once every hash is found, so asking about recent commits is cheap;
// one that is gone costs a walk of the history (cut short by a shallow
// clone's boundary).
func (r *Repo) Reachable(hashes ...string) (map[string]bool, error) {
	found := make(map[string]bool, len(hashes))
	want := map[plumbing.Hash]bool{}
	for _, h := range hashes {
		found[h] = false
		if plumbing.IsHash(h) {
			want[plumbing.NewHash(h)] = true
		}
	}
	if len(want) == 0 {
		return found, nil
	}
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("check commits against HEAD: %w", err)
	}
	defer end()
	head, err := r.headHash()
	if err != nil || head.IsZero() {
		return found, err
	}
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{head}
	for left := len(want); len(queue) > 0 && left > 0; {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		if want[h] {
			found[h.String()] = true
			left--
		}
		c, err := r.repo.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) && h != head {
			continue // beyond a shallow clone's boundary
		}
		if err != nil {
			return nil, fmt.Errorf("check commits against HEAD: read commit %s: %w", Short(h.String()), err)
		}
		queue = append(queue, c.ParentHashes...)
	}
	return found, nil
}
