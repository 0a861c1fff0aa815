package remote

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Two jobs push their records (one of them twice, as its run goes on) from
// clones without a git identity, at the same time as far as refs go (one
// ref each); another clone fetches and reads them all. The records touch
// no branch, index or work tree.
func TestRecordsPushedAndRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, origin := repoWithOrigin(t)
	b := filepath.Join(t.TempDir(), "b")
	gitT(t, t.TempDir(), "clone", "-q", origin, b)
	head := gitT(t, a, "rev-parse", "HEAD")
	ra, rb := Remote{Dir: a, Name: "origin", Env: []string{"HOME=" + t.TempDir(), "PATH=" + getenvPath()}}, Remote{Dir: b, Name: "origin"}
	refA, refB := RecordRef("plan", "1", "r1"), RecordRef("plan", "2", "r2")
	if err := ra.PushRecord(ctx, refA, "debussy record", map[string][]byte{"run.json": []byte(`{"id":"r1"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := ra.PushRecord(ctx, refA, "debussy record", map[string][]byte{"run.json": []byte(`{"id":"r1","status":"completed"}`),
		"events.jsonl": []byte("{}\n")}); err != nil {
		t.Fatal(err)
	}
	if err := rb.PushRecord(ctx, refB, "debussy record", map[string][]byte{"run.json": []byte(`{"id":"r2"}`)}); err != nil {
		t.Fatal(err)
	}
	if n := gitT(t, origin, "rev-list", "--count", refA); n != "2" {
		t.Errorf("record A has %s commits on origin, want 2 (it grows)", n)
	}
	if got := gitT(t, a, "rev-parse", "HEAD"); got != head || gitT(t, a, "status", "--porcelain") != "" {
		t.Errorf("pushing a record moved HEAD or touched the tree")
	}
	c := filepath.Join(t.TempDir(), "c")
	gitT(t, t.TempDir(), "clone", "-q", origin, c)
	rc := Remote{Dir: c, Name: "origin"}
	if err := rc.FetchRecords(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := rc.Records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Plan != "plan" || recs[0].Phase != "1" || recs[0].Run != "r1" || recs[1].Phase != "2" {
		t.Fatalf("records %+v", recs)
	}
	if string(recs[0].Files["run.json"]) != `{"id":"r1","status":"completed"}` || string(recs[0].Files["events.jsonl"]) != "{}\n" {
		t.Errorf("record 1 holds %q", recs[0].Files)
	}
	// A URL or a path works as well as a remote's name.
	d := filepath.Join(t.TempDir(), "d")
	gitT(t, t.TempDir(), "init", "-q", d)
	if err := (Remote{Dir: d, Name: origin}).FetchRecords(ctx); err != nil {
		t.Fatal(err)
	}
	if recs, _ := (Remote{Dir: d}).Records(ctx); len(recs) != 2 {
		t.Errorf("fetched by path: %d records", len(recs))
	}
}

func getenvPath() string { return os.Getenv("PATH") }
