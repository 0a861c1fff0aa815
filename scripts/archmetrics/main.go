// Command archmetrics measures the shape of one package of debussy (by
// default orchestrator/) the way issue 52's targets are stated, so the
// numbers before and after a refactor come from one command:
//
//	cd scripts/archmetrics && go run . [-v] [REPO_ROOT] [PACKAGE_DIR]
//
// It prints, for the package's non-test files:
//   - lines: their lines (wc -l);
//   - r := p.r: the lines that take the whole run from a phase;
//   - phaseRun fields: the fields of the phaseRun struct (0 without one);
//   - record-field writes: assignments (=, op=, ++, --) whose left side
//     selects a field of a type of package state (a phase's or a run's
//     record, the ledger, their economics);
//   - OpenTelemetry imports: imports of go.opentelemetry.io/...;
//   - notifier calls: calls of a notify.Dispatcher method or of a function
//     named announce*, in all and in phase code (methods of phaseRun);
//   - record-first commit sites: functions that call the lock wait or the
//     record-first hook (commitWaiting, listFirst, unlist,
//     gitcommit.Written), not counting those helpers themselves;
//   - up-arrows: the file graph's arrows (file A uses a name declared in
//     file B) that point up in the best layering of the files, i.e. the
//     size of a minimum feedback arc set: however the files are ordered
//     into layers, at least that many arrows point from a lower file to a
//     higher one. Exact for every strongly connected part of up to 24
//     files (dynamic programming over subsets), else an upper bound.
//
// -v lists the arrows that point up in the layering found.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	verbose := flag.Bool("v", false, "list the up-arrows")
	flag.Parse()
	root, dir := "../..", "orchestrator"
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	if flag.NArg() > 1 {
		dir = flag.Arg(1)
	}
	root, _ = filepath.Abs(root)
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax | packages.NeedTypes |
		packages.NeedTypesInfo | packages.NeedImports, Dir: root, Tests: false}
	pkgs, err := packages.Load(cfg, "./"+dir)
	if err != nil || len(pkgs) != 1 {
		fmt.Fprintln(os.Stderr, "load:", err, len(pkgs))
		os.Exit(2)
	}
	p := pkgs[0]
	if len(p.Errors) > 0 {
		for _, e := range p.Errors {
			fmt.Fprintln(os.Stderr, e)
		}
		os.Exit(2)
	}
	m := measure(p)
	fmt.Printf("package %s (%d files)\n", p.PkgPath, len(p.Syntax))
	fmt.Printf("  lines (non-test)              %d\n", m.lines)
	fmt.Printf("  r := p.r                      %d\n", m.rp)
	fmt.Printf("  phaseRun fields               %d\n", m.fields)
	fmt.Printf("  record-field writes           %d\n", m.writes)
	fmt.Printf("  OpenTelemetry imports         %d\n", m.otel)
	fmt.Printf("  notifier calls                %d (in phase code, methods of phaseRun: %d)\n", m.notify, m.phaseNotify)
	fmt.Printf("  record-first commit sites     %d %v\n", len(m.sites), m.sites)
	exact := ""
	if !m.exact {
		exact = " (upper bound: a strongly connected part is too large for the exact count)"
	}
	fmt.Printf("  file arrows                   %d\n", m.arrows)
	fmt.Printf("  up-arrows (min feedback arcs) %d%s\n", len(m.up), exact)
	if *verbose {
		fmt.Println("  layering (top first):", strings.Join(m.order, " "))
		for _, a := range m.up {
			fmt.Println("    up:", a)
		}
		for _, w := range m.writeList {
			fmt.Println("    write:", w)
		}
	}
}

type metrics struct {
	lines, rp, fields, writes, otel, notify, arrows int
	phaseNotify                                     int
	sites                                           []string
	up                                              []string
	order                                           []string
	exact                                           bool
	writeList                                       []string
}

var rpLine = regexp.MustCompile(`(?m)^\s*r(, [a-z]+)* := p\.r\b`)

func measure(p *packages.Package) metrics {
	var m metrics
	fset := p.Fset
	info := p.TypesInfo
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	files := map[string]bool{}
	for i, f := range p.Syntax {
		name := filepath.Base(p.CompiledGoFiles[i])
		files[name] = true
		src, _ := os.ReadFile(p.CompiledGoFiles[i])
		m.lines += strings.Count(string(src), "\n")
		m.rp += len(rpLine.FindAll(src, -1))
		for _, imp := range f.Imports {
			if strings.HasPrefix(strings.Trim(imp.Path.Value, `"`), "go.opentelemetry.io/") {
				m.otel++
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					return true
				}
				for _, lhs := range n.Lhs {
					if writesState(info, lhs) {
						m.writes++
						m.writeList = append(m.writeList, fset.Position(lhs.Pos()).String())
					}
				}
			case *ast.IncDecStmt:
				if writesState(info, n.X) {
					m.writes++
					m.writeList = append(m.writeList, fset.Position(n.Pos()).String())
				}
			case *ast.CallExpr:
				if notifierCall(info, n) {
					m.notify++
				}
			}
			return true
		})
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Body != nil && fd.Recv != nil && strings.Contains(types.ExprString(fd.Recv.List[0].Type), "phaseRun") {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok && notifierCall(info, c) {
						m.phaseNotify++
					}
					return true
				})
			}
			if !ok || fd.Body == nil || recordFirstHelper[fd.Name.Name] {
				continue
			}
			found := false
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && recordFirstCall(info, c) {
					found = true
				}
				return !found
			})
			if found {
				m.sites = append(m.sites, name+":"+fd.Name.Name)
			}
		}
	}
	if obj := p.Types.Scope().Lookup("phaseRun"); obj != nil {
		if st, ok := obj.Type().Underlying().(*types.Struct); ok {
			m.fields = st.NumFields()
		}
	}
	// The file graph.
	edges := map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != p.Types || !obj.Pos().IsValid() {
			continue
		}
		from, to := fileOf(id.Pos()), fileOf(obj.Pos())
		if from == to || !files[from] || !files[to] {
			continue
		}
		if obj.Parent() != p.Types.Scope() && !isMember(obj) {
			continue // a local name
		}
		if edges[from] == nil {
			edges[from] = map[string]bool{}
		}
		edges[from][to] = true
	}
	for _, tos := range edges {
		m.arrows += len(tos)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	})
	m.order, m.up, m.exact = layering(names, edges)
	sort.Strings(m.sites)
	return m
}

// isMember reports whether obj is a field or method (declared in the
// package's type declarations, so a use depends on that file).
func isMember(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Var:
		return o.IsField()
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil
	}
	return false
}

// writesState reports whether assigning to e changes a field of one of
// package state's types.
func writesState(info *types.Info, e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[x]; ok && sel.Kind() == types.FieldVal {
				if isStateType(sel.Recv()) {
					return true
				}
			}
			e = x.X
		default:
			return false
		}
	}
}

func isStateType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && strings.HasSuffix(n.Obj().Pkg().Path(), "/state")
}

func notifierCall(info *types.Info, c *ast.CallExpr) bool {
	var id *ast.Ident
	switch f := c.Fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return false
	}
	if strings.HasPrefix(id.Name, "announce") {
		return true
	}
	fn, ok := info.Uses[id].(*types.Func)
	if !ok {
		return false
	}
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && strings.Contains(recv.Type().String(), "notify.Dispatcher")
}

// recordFirstHelper are the lock-wait and record-first helpers themselves.
var recordFirstHelper = map[string]bool{"commitWaiting": true, "listFirst": true, "unlist": true}

func recordFirstCall(info *types.Info, c *ast.CallExpr) bool {
	var id *ast.Ident
	switch f := c.Fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return false
	}
	if recordFirstHelper[id.Name] {
		return true
	}
	if fn, ok := info.Uses[id].(*types.Func); ok && fn.Name() == "Written" && fn.Pkg() != nil && strings.HasSuffix(fn.Pkg().Path(), "/gitcommit") {
		return true
	}
	return false
}

// layering orders the files so that as few arrows as possible point from a
// later file to an earlier one, and returns the order and those arrows.
func layering(names []string, edges map[string]map[string]bool) (order, up []string, exact bool) {
	exact = true
	for _, scc := range sccs(names, edges) {
		var o []string
		if len(scc) <= 24 {
			o = exactOrder(scc, edges)
		} else {
			o, exact = greedyOrder(scc, edges), false
		}
		order = append(order, o...)
	}
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	for from, tos := range edges {
		for to := range tos {
			if pos[to] < pos[from] {
				up = append(up, from+" → "+to)
			}
		}
	}
	sort.Strings(up)
	return order, up, exact
}

// sccs are the strongly connected parts in topological order (callers
// first): Tarjan's, whose output is reverse topological.
func sccs(names []string, edges map[string]map[string]bool) [][]string {
	index, low := map[string]int{}, map[string]int{}
	on := map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for _, w := range slices.Sorted(keys(edges[v])) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			sort.Strings(c)
			out = append(out, c)
		}
	}
	for _, v := range names {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	slices.Reverse(out)
	return out
}

func keys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// exactOrder is an order of the part's files with the fewest up-arrows:
// best[S] is the fewest up-arrows among S's files placed first, adding v
// after S costs v's arrows into S.
func exactOrder(scc []string, edges map[string]map[string]bool) []string {
	k := len(scc)
	out := make([]uint32, k) // out[i]: the part's files i points to
	for i, a := range scc {
		for j, b := range scc {
			if edges[a][b] {
				out[i] |= 1 << j
			}
		}
	}
	full := uint32(1)<<k - 1
	best := make([]int32, full+1)
	from := make([]int8, full+1)
	for s := uint32(1); s <= full; s++ {
		best[s] = 1 << 30
		for rest := s; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros32(rest)
			prev := s &^ (1 << v)
			if c := best[prev] + int32(bits.OnesCount32(out[v]&prev)); c < best[s] {
				best[s], from[s] = c, int8(v)
			}
		}
	}
	order := make([]string, k)
	for s, i := full, k-1; s != 0; i-- {
		v := from[s]
		order[i] = scc[v]
		s &^= 1 << v
	}
	return order
}

// greedyOrder is Eades, Lin and Smyth's heuristic: sinks to the end,
// sources to the front, else the file with the most arrows out less in.
func greedyOrder(scc []string, edges map[string]map[string]bool) []string {
	left := map[string]bool{}
	for _, n := range scc {
		left[n] = true
	}
	deg := func(n string) (in, out int) {
		for m := range left {
			if edges[n][m] {
				out++
			}
			if edges[m][n] {
				in++
			}
		}
		return
	}
	var front, back []string
	for len(left) > 0 {
		changed := true
		for changed {
			changed = false
			for _, n := range slices.Sorted(keys(left)) {
				in, out := deg(n)
				switch {
				case out == 0:
					back = append([]string{n}, back...)
				case in == 0:
					front = append(front, n)
				default:
					continue
				}
				delete(left, n)
				changed = true
			}
		}
		if len(left) == 0 {
			break
		}
		bestN, bestD := "", -1<<30
		for _, n := range slices.Sorted(keys(left)) {
			in, out := deg(n)
			if out-in > bestD {
				bestN, bestD = n, out-in
			}
		}
		front = append(front, bestN)
		delete(left, bestN)
	}
	return append(front, back...)
}
