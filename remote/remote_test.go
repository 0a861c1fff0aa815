package remote

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repoWithOrigin is a clone of a bare origin holding one commit on main.
func repoWithOrigin(t *testing.T) (clone, origin string) {
	t.Helper()
	origin = filepath.Join(t.TempDir(), "origin.git")
	gitT(t, t.TempDir(), "init", "-q", "--bare", origin)
	clone = filepath.Join(t.TempDir(), "clone")
	gitT(t, t.TempDir(), "clone", "-q", origin, clone)
	gitT(t, clone, "commit", "-q", "--allow-empty", "-m", "initial")
	gitT(t, clone, "push", "-q", "origin", "HEAD:refs/heads/main")
	return clone, origin
}

func TestLimitTrailer(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 19, 0, 0, 0, time.FixedZone("CET", 3600))
	v := LimitTrailer("five_hour", at)
	if v != "five_hour; resets=2026-11-27T18:00:00Z" {
		t.Fatalf("trailer %q", v)
	}
	cases := []struct {
		in     string
		limit  string
		resets time.Time
		ok     bool
	}{
		{v, "five_hour", at, true},
		{"seven_day;resets=2026-12-01T00:00:00Z", "seven_day", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true},
		{"five_hour", "", time.Time{}, false},
		{"five_hour; resets=tomorrow", "", time.Time{}, false},
		{"; resets=2026-12-01T00:00:00Z", "", time.Time{}, false},
	}
	for _, tc := range cases {
		limit, resets, ok := ParseLimitTrailer(tc.in)
		if ok != tc.ok || limit != tc.limit || !resets.Equal(tc.resets) {
			t.Errorf("ParseLimitTrailer(%q) = %q, %s, %v", tc.in, limit, resets, ok)
		}
	}
}

// The hold is the unexpired record that resets last, reachable from HEAD
// or from the remote's debussy branches once fetched.
func TestAccountHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clone, origin := repoWithOrigin(t)
	if _, ok, err := AccountHold(ctx, clone, "origin"); err != nil || ok {
		t.Fatalf("no records: %v %v", ok, err)
	}
	if _, _, err := AccountHold(ctx, clone, "nosuch"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("unknown remote: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	record := func(dir, phase string, resets time.Time) {
		gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "debussy: phase "+phase+" — checkpoint at the limit\n\n"+
			"Debussy-Plan: plan.md\nDebussy-Phase: "+phase+"\nDebussy-Event: retry\nDebussy-Session: 1\n"+
			LimitKey+": "+LimitTrailer("five_hour", resets))
	}
	// Another job pushes its limit to its phase branch.
	other := filepath.Join(t.TempDir(), "other")
	gitT(t, t.TempDir(), "clone", "-q", origin, other)
	record(other, "2", now.Add(-time.Minute)) // expired
	record(other, "2", now.Add(time.Hour))
	gitT(t, other, "push", "-q", "origin", "HEAD:refs/heads/debussy/plan/phase-2")
	h, ok, err := AccountHold(ctx, clone, "origin")
	if err != nil || !ok || h.Phase != "2" || !h.Resets.Equal(now.Add(time.Hour)) || h.Limit != "five_hour" {
		t.Fatalf("hold from the remote: %+v %v %v", h, ok, err)
	}
	// HEAD's own record that resets later wins; without a remote, HEAD and
	// what was fetched before are read.
	record(clone, "1", now.Add(2*time.Hour))
	h, ok, err = AccountHold(ctx, clone, "")
	if err != nil || !ok || h.Phase != "1" {
		t.Fatalf("hold from HEAD: %+v %v %v", h, ok, err)
	}
	if h, ok, _ := (Remote{Dir: clone}).Hold(ctx, now.Add(3*time.Hour), DebussyRefs("")); ok {
		t.Errorf("expired records hold: %+v", h)
	}
	// A commit older than the longest limit's window records none in
	// force (whatever its trailer says): the walk stops before it, which
	// keeps status quick on a long history.
	record(clone, "3", now.Add(10*24*time.Hour)) // a (made-up) reset in ten days, recorded today
	if h, ok, _ := (Remote{Dir: clone}).Hold(ctx, now.Add(9*24*time.Hour), DebussyRefs("")); ok {
		t.Errorf("a record nine days old holds: %+v", h)
	}
	if h, ok, _ := (Remote{Dir: clone}).Hold(ctx, now.Add(-time.Minute), DebussyRefs("")); !ok || h.Phase != "3" {
		t.Errorf("a record of today does not hold: %+v", h)
	}
}

// A push never forces: a moved branch is ErrRejected; a remote hook's
// refusal is not.
func TestPushRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clone, origin := repoWithOrigin(t)
	r := Remote{Dir: clone, Name: "origin"}
	if err := r.Push(ctx, "debussy/p/phase-1"); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	gitT(t, t.TempDir(), "clone", "-q", "--branch", "debussy/p/phase-1", origin, other)
	gitT(t, other, "commit", "-q", "--allow-empty", "-m", "theirs")
	gitT(t, other, "push", "-q", "origin", "HEAD")
	gitT(t, clone, "commit", "-q", "--allow-empty", "-m", "ours")
	if err := r.Push(ctx, "debussy/p/phase-1"); !errors.Is(err, ErrRejected) {
		t.Fatalf("push onto a moved branch: %v", err)
	}
	if ok, err := r.FetchBranch(ctx, "debussy/p/phase-1"); !ok || err != nil {
		t.Fatalf("fetch: %v %v", ok, err)
	}
	if ok, err := r.FetchBranch(ctx, "debussy/p/phase-9"); ok || err != nil {
		t.Fatalf("fetch a missing branch: %v %v", ok, err)
	}
	if err := os.WriteFile(filepath.Join(origin, "hooks", "pre-receive"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "debussy/p/phase-2"); err == nil || errors.Is(err, ErrRejected) {
		t.Fatalf("push refused by a hook: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Push(cctx, "debussy/p/phase-3"); !errors.Is(err, context.Canceled) {
		t.Fatalf("push after cancel: %v", err)
	}
}

// The trailer debussy writes in a commit message reads back as written.
func TestLimitTrailerInMessage(t *testing.T) {
	t.Parallel()
	resets := time.Date(2026, 11, 27, 19, 0, 0, 0, time.UTC)
	m := gitcommit.Message{Subject: "debussy: phase 2 — checkpoint at the 5-hour limit", Run: "r", Plan: "plan.md", Phase: "2",
		Event: "retry", Session: 1, UsageLimit: LimitTrailer("five_hour", resets)}
	var got string
	for _, tr := range gitcommit.ParseTrailers(m.String()) {
		if tr.Key == LimitKey {
			got = tr.Value
		}
	}
	limit, at, ok := ParseLimitTrailer(got)
	if !ok || limit != "five_hour" || !at.Equal(resets) {
		t.Fatalf("read back %q from\n%s", got, m.String())
	}
}
