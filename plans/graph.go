package plans

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// CycleError is returned by Plan.Order when dependencies form a cycle.
// Cycle lists phase ids in run order, the first repeated at the end:
// 1 → 2 → 3 → 1 means 2 waits for 1, 3 for 2, and 1 for 3.
type CycleError struct {
	Cycle []string
}

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Cycle, " → ")
}

// Unwrap makes a cycle an invalid plan for errors.Is(err, ErrInvalidPlan).
func (e *CycleError) Unwrap() error { return ErrInvalidPlan }

// Order returns the phases so that every phase comes after the phases it
// depends on; among phases free to run, table order decides. Dependencies
// on unknown ids are ignored here (Load reports them).
func (p *Plan) Order() ([]*Phase, error) {
	pos := make(map[*Phase]int, len(p.Phases))
	for i, ph := range p.Phases {
		pos[ph] = i
	}
	done := make([]bool, len(p.Phases))
	out := make([]*Phase, 0, len(p.Phases))
	for len(out) < len(p.Phases) {
		next := -1
		for i, ph := range p.Phases {
			if !done[i] && p.ready(ph, pos, done) {
				next = i
				break
			}
		}
		if next < 0 {
			cycles := p.cycles()
			if len(cycles) == 0 { // unreachable: a stall always has a cycle
				return nil, &CycleError{}
			}
			return nil, &CycleError{Cycle: cycles[0]}
		}
		done[next] = true
		out = append(out, p.Phases[next])
	}
	return out, nil
}

func (p *Plan) ready(ph *Phase, pos map[*Phase]int, done []bool) bool {
	for _, id := range ph.DependsOn {
		if dep := p.Phase(id); dep != nil && !done[pos[dep]] {
			return false
		}
	}
	return true
}

// cycles finds one cycle per strongly connected component of the
// dependency graph (Tarjan), each in run order starting from the phase
// that comes first in the table.
func (p *Plan) cycles() [][]string {
	n := len(p.Phases)
	pos := make(map[*Phase]int, n)
	for i, ph := range p.Phases {
		pos[ph] = i
	}
	deps := make([][]int, n)
	for i, ph := range p.Phases {
		for _, id := range ph.DependsOn {
			if dep := p.Phase(id); dep != nil {
				deps[i] = append(deps[i], pos[dep])
			}
		}
	}

	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var sccs [][]int
	counter := 0
	var strong func(v int)
	strong = func(v int) {
		index[v], low[v] = counter, counter
		counter++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range deps[v] {
			if index[w] < 0 {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			sccs = append(sccs, scc)
		}
	}
	for v := range n {
		if index[v] < 0 {
			strong(v)
		}
	}

	var out [][]string
	for _, scc := range sccs {
		in := make(map[int]bool, len(scc))
		start := scc[0]
		for _, v := range scc {
			in[v] = true
			start = min(start, v)
		}
		if len(scc) == 1 && !contains(deps[start], start) {
			continue
		}
		out = append(out, p.cycleFrom(start, in, deps))
	}
	// Report cycles in table order of their first phase.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && pos[p.Phase(out[j][0])] < pos[p.Phase(out[j-1][0])]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// cycleFrom walks dependencies inside one component until a phase repeats,
// then returns that loop in run order, rotated to start at its first phase
// in the table.
func (p *Plan) cycleFrom(start int, in map[int]bool, deps [][]int) []string {
	seenAt := map[int]int{}
	var path []int
	for v := start; ; {
		if k, ok := seenAt[v]; ok {
			path = path[k:]
			break
		}
		seenAt[v] = len(path)
		path = append(path, v)
		for _, w := range deps[v] {
			if in[w] {
				v = w
				break
			}
		}
	}
	// path follows "depends on"; run order is the reverse.
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	first := 0
	for i, v := range path {
		if v < path[first] {
			first = i
		}
	}
	ids := make([]string, 0, len(path)+1)
	for i := range path {
		ids = append(ids, p.Phases[path[(first+i)%len(path)]].ID)
	}
	return append(ids, ids[0])
}

func contains[T comparable](list []T, x T) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// resolveDependencies turns the dependency references of every phase file
// into phase ids now that the whole table is known.
func (l *loader) resolveDependencies() {
	byPath := map[string]*Phase{}
	for _, ph := range l.plan.Phases {
		if _, ok := byPath[pathKey(ph.Path)]; !ok {
			byPath[pathKey(ph.Path)] = ph
		}
	}
	for _, ph := range l.plan.Phases {
		for _, r := range l.refs[ph] {
			var dep *Phase
			if r.link != "" {
				target := resolvePath(ph.Path, linkPath(r.link))
				dep = byPath[pathKey(target)]
				if ids := mentions(r.text); dep == nil && len(ids) == 1 && l.findID(ids[0]) != nil {
					// A moved or renamed file: the text still says which phase.
					dep = l.findID(ids[0])
					l.warnf(CodeBrokenDependencyLink, ph.Path, r.line,
						"phase %s: the dependency link %s is not a phase file of the master plan; read as phase %s from its text %q; fix the link",
						ph.ID, r.link, dep.ID, r.text)
				}
				if dep == nil {
					l.errorf(CodeUnknownDependency, ph.Path, r.line,
						"phase %s depends on %s, which is not a phase file of the master plan (phases: %s)",
						ph.ID, r.link, l.idList())
					continue
				}
			} else {
				dep = l.findID(r.id)
				if dep == nil {
					if r.id[0] < '0' || r.id[0] > '9' {
						continue // "Phase N", "Phase and": prose, not an id
					}
					l.errorf(CodeUnknownDependency, ph.Path, r.line,
						"phase %s depends on phase %s, which is not in the master plan's table (phases: %s)",
						ph.ID, r.id, l.idList())
					continue
				}
			}
			if dep == ph {
				l.warnf(CodeSelfDependency, ph.Path, r.line, "phase %s names itself as a dependency; ignored", ph.ID)
				continue
			}
			if !contains(ph.DependsOn, dep.ID) {
				ph.DependsOn = append(ph.DependsOn, dep.ID)
				if ph.depLine == nil {
					ph.depLine = map[string]int{}
				}
				ph.depLine[dep.ID] = r.line
			}
		}
	}
}

func (l *loader) findID(id string) *Phase {
	if ph := l.plan.Phase(id); ph != nil {
		return ph
	}
	for _, ph := range l.plan.Phases {
		if strings.EqualFold(ph.ID, id) {
			return ph
		}
	}
	return nil
}

func (l *loader) idList() string {
	ids := make([]string, len(l.plan.Phases))
	for i, ph := range l.plan.Phases {
		ids[i] = ph.ID
	}
	return strings.Join(ids, ", ")
}

// linkPath is the file part of a link destination, unescaped.
func linkPath(dest string) string {
	if i := strings.IndexByte(dest, '#'); i >= 0 {
		dest = dest[:i]
	}
	if u, err := url.PathUnescape(dest); err == nil {
		dest = u
	}
	return dest
}

func pathKey(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// checkGraph reports every dependency cycle at the line that closes it:
// for 1 → 2 → 3 → 1, phase 1's declaration that it depends on phase 3.
func (l *loader) checkGraph() {
	for _, c := range l.plan.cycles() {
		first := l.plan.Phase(c[0])
		last := c[len(c)-2]
		file, line := l.plan.Path, first.Line
		if n, ok := first.depLine[last]; ok {
			file, line = first.Path, n
		}
		l.errorf(CodeDependencyCycle, file, line,
			"dependency cycle: %s (each phase waits for the one before it, so none can start); remove one of these dependencies, e.g. phase %s's on phase %s",
			strings.Join(c, " → "), first.ID, last)
	}
}

// checkNotes warns when a phase reads notes another phase writes without
// depending on it: nothing makes the writer run first.
func (l *loader) checkNotes() {
	writer := map[string]*Phase{}
	for _, ph := range l.plan.Phases {
		for _, w := range ph.WriteNotes {
			if _, ok := writer[w]; !ok {
				writer[w] = ph
			}
		}
	}
	for _, ph := range l.plan.Phases {
		for _, r := range ph.ReadNotes {
			w := writer[r]
			if w == nil || w == ph || l.plan.dependsOn(ph, w) {
				continue
			}
			l.warnf(CodeNotesNotDependency, ph.Path, ph.noteLine[r],
				"phase %s reads %s, which phase %s writes, but does not depend on phase %s: it may run before those notes exist",
				ph.ID, r, w.ID, w.ID)
		}
	}
}

// dependsOn reports whether ph depends on dep, directly or through others.
func (p *Plan) dependsOn(ph, dep *Phase) bool {
	seen := map[*Phase]bool{}
	var walk func(*Phase) bool
	walk = func(x *Phase) bool {
		if seen[x] {
			return false
		}
		seen[x] = true
		for _, id := range x.DependsOn {
			d := p.Phase(id)
			if d == dep || (d != nil && walk(d)) {
				return true
			}
		}
		return false
	}
	return walk(ph)
}

// Ready lists, in run order, the phases that are not done and whose
// dependencies, transitively, all are: what can run now, side by side.
func (p *Plan) Ready(done func(id string) bool) ([]*Phase, error) {
	order, err := p.Order()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPlan, err)
	}
	var ready []*Phase
	for _, ph := range order {
		if done(ph.ID) || len(p.Unfinished(ph, done)) > 0 {
			continue
		}
		ready = append(ready, ph)
	}
	return ready, nil
}

// Unfinished lists ph's dependencies, transitively and in plan order, that
// are not done.
func (p *Plan) Unfinished(ph *Phase, done func(id string) bool) []string {
	seen := map[string]bool{}
	var visit func(q *Phase)
	visit = func(q *Phase) {
		for _, d := range q.DependsOn {
			if !seen[d] {
				seen[d] = true
				if dp := p.Phase(d); dp != nil {
					visit(dp)
				}
			}
		}
	}
	visit(ph)
	var out []string
	for _, q := range p.Phases {
		if seen[q.ID] && !done(q.ID) {
			out = append(out, q.ID)
		}
	}
	return out
}
