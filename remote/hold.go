package remote

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A subscription's usage limit is the account's, not the phase's: the phase
// that meets it records the reset in its commit (pushed with --push), and
// every debussy that reads that commit — run, matrix, status, pipeline on
// any machine — starts nothing before the reset.

// LimitKey is the trailer of a commit made at a usage limit:
//
//	Debussy-Usage-Limit: five_hour; resets=2026-11-27T19:00:00Z
const LimitKey = "Debussy-Usage-Limit"

// LimitTrailer is LimitKey's value for a limit (five_hour, seven_day, …)
// that resets at resets.
func LimitTrailer(limit string, resets time.Time) string {
	if limit == "" {
		limit = "unknown"
	}
	return limit + "; resets=" + resets.UTC().Format(time.RFC3339)
}

// ParseLimitTrailer reads a LimitKey value; ok is false when it names no
// reset time.
func ParseLimitTrailer(v string) (limit string, resets time.Time, ok bool) {
	parts := strings.Split(v, ";")
	limit = strings.TrimSpace(parts[0])
	for _, p := range parts[1:] {
		k, val, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "resets") {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(val))
		if err != nil || limit == "" {
			return "", time.Time{}, false
		}
		return limit, t, true
	}
	return "", time.Time{}, false
}

// Hold is a usage limit recorded in git that has not reset yet.
type Hold struct {
	Limit  string    `json:"limit"`  // five_hour, seven_day, …
	Resets time.Time `json:"resets"` // when the API said it resets
	Phase  string    `json:"phase,omitempty"`
	Plan   string    `json:"plan,omitempty"`
	Commit string    `json:"commit"` // the commit that records it
}

// holdHorizon is how far back a commit can record a usage limit that has
// not reset yet: the longest limit's window (seven days), and a day for
// clocks that disagree.
const holdHorizon = 8 * 24 * time.Hour

// Hold returns, of the usage limits recorded in commits reachable from revs
// (git log's: refs, or --glob=…) and HEAD, the one that resets last after
// now; ok is false when none is in force.
func (r Remote) Hold(ctx context.Context, now time.Time, revs ...string) (Hold, bool, error) {
	if _, ok, err := r.Tip(ctx, "HEAD"); err != nil {
		return Hold{}, false, err
	} else if ok {
		revs = append([]string{"HEAD"}, revs...)
	}
	if len(revs) == 0 {
		return Hold{}, false, nil
	}
	// A limit still in force was met within its window (seven days at
	// most): older commits cannot hold one, so the walk stops there
	// instead of reading the whole history.
	revs = append([]string{"--since=" + now.Add(-holdHorizon).Format(time.RFC3339)}, revs...)
	cs, err := r.log(ctx, LimitKey+":", revs...)
	if err != nil {
		return Hold{}, false, fmt.Errorf("read the usage limits recorded in git: %w", err)
	}
	var h Hold
	for _, c := range cs {
		limit, resets, ok := ParseLimitTrailer(c.trailer(LimitKey))
		if !ok || !resets.After(now) || !resets.After(h.Resets) {
			continue
		}
		h = Hold{Limit: limit, Resets: resets, Phase: c.trailer("Debussy-Phase"), Plan: c.trailer("Debussy-Plan"), Commit: c.hash}
	}
	return h, !h.Resets.IsZero(), nil
}

// DebussyRefs is the git log argument for the debussy branches fetched
// from remote ("" for every remote's).
func DebussyRefs(remote string) string {
	if remote == "" {
		remote = "*"
	}
	return "--glob=refs/remotes/" + remote + "/debussy/*"
}

// AccountHold fetches remote's debussy branches (every plan's: the limit is
// the account's) and returns the usage limit in force that resets last,
// read from HEAD and those branches. remoteName "" reads HEAD and the
// debussy branches fetched earlier, without the network.
func AccountHold(ctx context.Context, repoDir, remoteName string) (Hold, bool, error) {
	r := Remote{Dir: repoDir, Name: remoteName}
	if remoteName != "" {
		if err := r.Check(ctx); err != nil {
			return Hold{}, false, err
		}
		if err := r.Fetch(ctx, "debussy/"); err != nil {
			return Hold{}, false, err
		}
	}
	return r.Hold(ctx, time.Now(), DebussyRefs(remoteName))
}
