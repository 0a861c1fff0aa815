package gitcommit

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Batched differential cases: many scenarios that need no config of their
// own share one repository pair, each in its own directory (c00/, c01/, …).
// Both sides are set up and changed together and committed once (one `git
// add -A && git commit`, one CommitAll), then every case is its own subtest
// comparing the tree, the index and the status below its directory. A case
// that needs its own config, HOME or a refusal is a plain diffCase instead.

// batchCase is one scenario of a batch. Its helpers see h.Dir as the case's
// directory, so paths are relative to it and h.Git runs there; a case must
// not change repository config (the batch's setup does that).
type batchCase struct {
	name   string
	setup  func(t *testing.T, h *diffRepo) // committed by git on both sides before change (may be nil)
	change func(t *testing.T, h *diffRepo)
	check  func(t *testing.T, d, g *diffRepo) // extra comparison, d and g rooted at the case's directory
}

// diffBatch is a group of cases sharing a repository pair and its config.
type diffBatch struct {
	name  string
	home  map[string]string
	env   map[string]string
	setup func(t *testing.T, h *diffRepo) // repository-wide, before the cases' setups
	cases []batchCase
}

// sub is h rooted at dir (relative to h.Dir).
func (h *diffRepo) sub(dir string) *diffRepo {
	c := *h
	c.Dir = h.path(dir)
	return &c
}

func batchDir(i int) string { return fmt.Sprintf("c%02d", i) }

func runDiffBatches(t *testing.T, batches []diffBatch) {
	t.Helper()
	for _, b := range batches {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			runDiffBatch(t, b)
		})
	}
}

func runDiffBatch(t *testing.T, b diffBatch) {
	each := func(h *diffRepo, step func(c batchCase) func(*testing.T, *diffRepo)) {
		for i, c := range b.cases {
			if f := step(c); f != nil {
				h.Mkdir(batchDir(i))
				f(h.t, h.sub(batchDir(i)))
			}
		}
	}
	tc := diffCase{
		name:    b.name,
		batched: true,
		home:    b.home,
		env:     b.env,
		setup: func(t *testing.T, h *diffRepo) {
			h.Write("README", "batch\n") // the setup commit is never empty
			if b.setup != nil {
				b.setup(t, h)
			}
			each(h, func(c batchCase) func(*testing.T, *diffRepo) { return c.setup })
		},
		change: func(t *testing.T, h *diffRepo) {
			each(h, func(c batchCase) func(*testing.T, *diffRepo) { return c.change })
		},
		check: func(t *testing.T, d, g *diffRepo) {
			// Equal commits hold the same tree: only the index and the
			// status can still differ.
			names := []string{"ls-tree", "ls-files", "status"}
			if d.sameCommit {
				names = names[1:]
			}
			views := map[string][2][]string{}
			for _, name := range names {
				views[name] = [2][]string{batchView(d, name), batchView(g, name)}
			}
			// What lies outside every case's directory (README) must agree too.
			for name, v := range views {
				var got, want []string
				for _, r := range v[0] {
					if !isBatchRecord(r) {
						got = append(got, r)
					}
				}
				for _, r := range v[1] {
					if !isBatchRecord(r) {
						want = append(want, r)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s outside the cases differs:\n--- debussy\n%s\n--- git\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			for i, c := range b.cases {
				prefix := batchDir(i) + "/"
				t.Run(c.name, func(t *testing.T) {
					for _, name := range names {
						got, want := underPrefix(views[name][0], prefix), underPrefix(views[name][1], prefix)
						if !slices.Equal(got, want) {
							t.Errorf("%s under %s differs:\n--- debussy\n%s\n--- git\n%s", name, prefix,
								strings.Join(got, "\n"), strings.Join(want, "\n"))
						}
					}
					if c.check != nil {
						c.check(t, d.sub(batchDir(i)), g.sub(batchDir(i)))
					}
				})
			}
		},
	}
	runDiffCase(t, tc)
}

// batchView lists one view of the repository, a record per path, each
// starting with the path and a tab so records can be picked by prefix.
func batchView(h *diffRepo, view string) []string {
	h.t.Helper()
	var out string
	var err error
	switch view {
	case "ls-tree":
		out, err = h.GitErr("ls-tree", "-r", "-t", "-z", "--full-tree", "HEAD")
	case "ls-files":
		out, err = h.GitErr("ls-files", "-s", "-v", "-z")
	case "status":
		out, err = h.GitErr("status", "--porcelain", "-z", "--untracked-files=all", "--ignored")
	}
	if err != nil {
		h.t.Fatalf("%s: %v", view, err)
	}
	var recs []string
	for _, r := range strings.Split(out, "\x00") {
		if r == "" {
			continue
		}
		if view == "status" {
			if len(r) > 3 {
				recs = append(recs, r[3:]+"\t"+r[:2])
			}
			continue
		}
		meta, path, _ := strings.Cut(r, "\t")
		recs = append(recs, path+"\t"+meta)
	}
	return recs
}

func underPrefix(recs []string, prefix string) []string {
	var out []string
	for _, r := range recs {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// isBatchRecord reports whether a record lies in a case's directory (or is
// that directory's tree entry).
func isBatchRecord(r string) bool {
	path, _, _ := strings.Cut(r, "\t")
	return len(path) >= 3 && path[0] == 'c' && path[1] >= '0' && path[1] <= '9' && path[2] >= '0' && path[2] <= '9' &&
		(len(path) == 3 || path[3] == '/')
}
