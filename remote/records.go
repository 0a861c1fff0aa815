package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A run's structured record travels beside its branch: each CI job
// (--push) pushes a commit holding its files (cijob says which) to a ref
// of its own under refs/debussy/records/, one per plan, phase and run —
// so jobs running at once never push to the same ref — and `debussy
// status --from` and `report --from` fetch them all. Refs outside
// refs/heads/ are not branches: no clone checks them out, collect never
// merges them.

// RecordsPrefix is where the records go.
const RecordsPrefix = "refs/debussy/records/"

// RecordRef is the ref of run's record of phase of the plan planID
// (plans.ID).
func RecordRef(planID, phase, run string) string {
	return RecordsPrefix + planID + "/phase-" + phase + "/" + run
}

// Record is one pushed record: its ref's plan, phase and run, and files.
type Record struct {
	Ref              string
	Plan, Phase, Run string
	Files            map[string][]byte
}

// recordIdentity commits a record without the user's git config: a CI
// job's clone may have none.
var recordIdentity = []string{"GIT_AUTHOR_NAME=debussy", "GIT_AUTHOR_EMAIL=debussy@localhost",
	"GIT_COMMITTER_NAME=debussy", "GIT_COMMITTER_EMAIL=debussy@localhost"}

// PushRecord commits files on ref in the repository (after the ref's
// last commit, if any: a record grows as the run goes) and pushes ref to
// the remote's ref of the same name, never forced: only this run writes
// it. Nothing touches the index, HEAD or the work tree.
func (r Remote) PushRecord(ctx context.Context, ref, message string, files map[string][]byte) error {
	tmp, err := os.MkdirTemp("", "debussy-record-")
	if err != nil {
		return fmt.Errorf("push record: %w", err)
	}
	defer os.RemoveAll(tmp)
	own := r
	own.Env = append(slices.Clone(r.environ()), append([]string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}, recordIdentity...)...)
	for _, name := range sortedKeys(files) {
		path := filepath.Join(tmp, "f")
		if err := os.WriteFile(path, files[name], 0o600); err != nil {
			return fmt.Errorf("push record: %w", err)
		}
		blob, err := own.Git(ctx, "hash-object", "-w", "--", path)
		if err != nil {
			return fmt.Errorf("push record: %w", err)
		}
		if _, err := own.Git(ctx, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+name); err != nil {
			return fmt.Errorf("push record: %w", err)
		}
	}
	tree, err := own.Git(ctx, "write-tree")
	if err != nil {
		return fmt.Errorf("push record: %w", err)
	}
	args := []string{"commit-tree", tree, "-m", message}
	if parent, ok, err := own.Tip(ctx, ref); err != nil {
		return fmt.Errorf("push record: %w", err)
	} else if ok {
		args = append(args, "-p", parent)
	}
	commit, err := own.Git(ctx, args...)
	if err != nil {
		return fmt.Errorf("push record: %w", err)
	}
	if _, err := own.Git(ctx, "update-ref", ref, commit); err != nil {
		return fmt.Errorf("push record: %w", err)
	}
	if _, err := r.git(ctx, "push", "--quiet", "--no-verify", r.Name, ref+":"+ref); err != nil {
		return fmt.Errorf("push record %s to %s: %w", ref, r.Name, err)
	}
	return nil
}

// FetchRecords fetches every record the remote has into the repository's
// refs of the same names (the remote's replace the local ones: they are
// what the jobs pushed). r.Name may be a remote's name, a URL or a path.
func (r Remote) FetchRecords(ctx context.Context) error {
	spec := "+" + RecordsPrefix + "*:" + RecordsPrefix + "*"
	if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", r.Name, spec); err != nil {
		return fmt.Errorf("fetch the run records from %s: %w", r.Name, err)
	}
	return nil
}

// Records are the records the repository holds (fetched or its own),
// with the files each holds now.
func (r Remote) Records(ctx context.Context) ([]Record, error) {
	out, err := r.git(ctx, "for-each-ref", "--format=%(refname)", RecordsPrefix)
	if err != nil {
		return nil, fmt.Errorf("list the run records: %w", err)
	}
	var recs []Record
	for _, ref := range strings.Fields(out) {
		parts := strings.Split(strings.TrimPrefix(ref, RecordsPrefix), "/")
		if len(parts) != 3 || !strings.HasPrefix(parts[1], "phase-") {
			continue // not debussy's layout
		}
		rec := Record{Ref: ref, Plan: parts[0], Phase: strings.TrimPrefix(parts[1], "phase-"), Run: parts[2], Files: map[string][]byte{}}
		names, err := r.git(ctx, "ls-tree", "--name-only", ref)
		if err != nil {
			return nil, fmt.Errorf("read the run record %s: %w", ref, err)
		}
		for _, name := range strings.Fields(names) {
			data, err := r.git(ctx, "cat-file", "blob", ref+":"+name)
			if err != nil {
				return nil, fmt.Errorf("read the run record %s: %w", ref, err)
			}
			rec.Files[name] = []byte(data)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func (r Remote) environ() []string {
	if r.Env != nil {
		return r.Env
	}
	return os.Environ()
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
