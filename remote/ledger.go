package remote

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
)

// commit is one debussy commit as git log gives it.
type commit struct {
	hash     string
	when     time.Time
	trailers []gitcommit.Trailer
}

func (c commit) trailer(key string) string {
	for _, t := range c.trailers {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}

// log lists, newest first (git's --topo-order, as gitcommit.ReadLedger),
// the commits reachable from revs whose message has a line starting with
// grep (case-insensitive), with their trailers.
func (r Remote) log(ctx context.Context, grep string, revs ...string) ([]commit, error) {
	args := append([]string{"log", "--topo-order", "-i", "--grep=^" + grep, "--format=%x1e%H%x1f%ct%x1f%B"}, revs...)
	args = append(args, "--")
	out, err := r.git(ctx, args...)
	if err != nil {
		return nil, err
	}
	var cs []commit
	for _, rec := range strings.Split(out, "\x1e") {
		f := strings.SplitN(rec, "\x1f", 3)
		if len(f) < 3 {
			continue
		}
		secs, _ := strconv.ParseInt(f[1], 10, 64)
		cs = append(cs, commit{hash: f[0], when: time.Unix(secs, 0), trailers: gitcommit.ParseTrailers(f[2])})
	}
	return cs, nil
}

// LatestOutcome is how phase of plan (its Debussy-Plan, a
// repository-relative path) last ended in the history of ref: the newest
// commit whose trailers record an outcome for it (gitcommit.Outcome). ok
// is false when none does.
func (r Remote) LatestOutcome(ctx context.Context, ref, plan, phase string) (o gitcommit.Outcome, ok bool, err error) {
	cs, err := r.log(ctx, "Debussy-Event:", ref)
	if err != nil {
		return gitcommit.Outcome{}, false, fmt.Errorf("read the outcomes on %s: %w", ref, err)
	}
	for _, c := range cs {
		p := c.trailer("Debussy-Plan")
		if c.trailer("Debussy-Phase") != phase || (p != "" && p != plan) || !gitcommit.IsOutcome(c.trailer("Debussy-Event")) {
			continue
		}
		o = gitcommit.Outcome{Plan: p, Phase: phase, Event: c.trailer("Debussy-Event"), Commit: c.hash,
			Run: c.trailer("Debussy-Run"), Reason: c.trailer("Debussy-Reason"), When: c.when}
		o.Sessions, _ = strconv.Atoi(c.trailer("Debussy-Sessions"))
		o.Restarts, _ = strconv.Atoi(c.trailer("Debussy-Restarts"))
		return o, true, nil
	}
	return gitcommit.Outcome{}, false, nil
}

// Unpushed lists the debussy commits for phase of plan reachable from HEAD
// but not from ref (all of them when ref is ""): the work a kill between
// commit and push left unpushed.
func (r Remote) Unpushed(ctx context.Context, ref, plan, phase string) ([]string, error) {
	revs := []string{"HEAD"}
	if ref != "" {
		revs = append(revs, "^"+ref)
	}
	cs, err := r.log(ctx, "Debussy-Phase:", revs...)
	if err != nil {
		return nil, fmt.Errorf("list unpushed commits: %w", err)
	}
	var out []string
	for _, c := range cs {
		if p := c.trailer("Debussy-Plan"); c.trailer("Debussy-Phase") == phase && (p == "" || p == plan) {
			out = append(out, c.hash)
		}
	}
	return out, nil
}
