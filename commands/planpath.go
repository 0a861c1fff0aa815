package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/plans"
)

// loadPlan reads the master plan at path (as the user typed it). A path
// that is not there is said in a sentence, with the markdown files nearby
// that look like master plans — usually the plan is one directory down.
func (e *Env) loadPlan(ws *workspace, path string) (*plans.Plan, error) {
	abs := e.abs(path)
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("there is no plan at %s", path)
		if found := planCandidates(ws.Root, 5); len(found) > 0 {
			msg += "; markdown files here that look like master plans: " + strings.Join(found, ", ")
		} else {
			msg += " (debussy run takes the master plan: the markdown file whose table links the phase files)"
		}
		return nil, &notThere{msg: msg}
	}
	plan, err := plans.Load(abs, planOptions(ws))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	return plan, nil
}

// planCandidates lists, relative to root and at most n, the markdown
// files under root whose name says plan or master (MASTER_PLAN.md,
// docs/plans/plan.md), master plans first, shallow ones first.
func planCandidates(root string, n int) []string {
	var found []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || strings.Count(rel, string(filepath.Separator)) >= 4) {
				return filepath.SkipDir
			}
			return nil
		}
		name := strings.ToLower(d.Name())
		if strings.HasSuffix(name, ".md") && (strings.Contains(name, "plan") || strings.Contains(name, "master")) {
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	rank := func(s string) int {
		r := strings.Count(s, "/") * 2
		if !strings.Contains(strings.ToLower(filepath.Base(s)), "master") {
			r++
		}
		return r
	}
	slices.SortStableFunc(found, func(a, b string) int { return rank(a) - rank(b) })
	return found[:min(n, len(found))]
}
