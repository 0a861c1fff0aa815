package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// The commit's author and committer: git's own answer (`git var
// GIT_AUTHOR_IDENT`: every date form git accepts, its identity fallbacks
// and refusals), or without git from config and the environment.

// identity is the author and committer git would use.
func (r *Repo) identity(ctx context.Context, cfg gitConfig) (author, committer object.Signature, err error) {
	if r.gitBin == "" {
		return r.signature(cfg)
	}
	var env []string
	if r.clock {
		// WithClock dates what the environment does not.
		now := r.now()
		stamp := fmt.Sprintf("@%d %s", now.Unix(), now.Format("-0700"))
		if r.getenv("TZ") != "" {
			stamp = fmt.Sprintf("@%d", now.Unix()) // the zone is git's (libc's TZ)
		}
		for _, k := range []string{"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"} {
			if r.getenv(k) == "" {
				env = append(env, k+"="+stamp)
			}
		}
	}
	ident := func(v string) (object.Signature, error) {
		out, err := r.git(ctx, gitRun{env: env}, "var", v)
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "identity unknown") {
			// git would refuse to commit, and the work must be saved: git's
			// answer with what it could not find made up.
			out, err = r.git(ctx, gitRun{env: append(env, "EMAIL=debussy@localhost")}, "var", v)
			if errors.As(err, &ge) {
				out, err = r.git(ctx, gitRun{env: append(env, "EMAIL=debussy@localhost", "GIT_AUTHOR_NAME=debussy", "GIT_COMMITTER_NAME=debussy")}, "var", v)
			}
		}
		if err != nil {
			return object.Signature{}, fmt.Errorf("read identity: %w", err)
		}
		return parseIdent(strings.TrimSuffix(string(out), "\n"))
	}
	if author, err = ident("GIT_AUTHOR_IDENT"); err != nil {
		return
	}
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"} {
		if r.getenv(k) != "" || cfg.has(strings.ReplaceAll(strings.ToLower(k[4:]), "_", ".")) {
			committer, err = ident("GIT_COMMITTER_IDENT") // may differ from the author's
			return
		}
	}
	return author, author, nil // both are user.*'s, now
}

// parseIdent reads git's "Name <email> 1700000000 +0100".
func parseIdent(s string) (object.Signature, error) {
	open, close := strings.LastIndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if open < 0 || close < open {
		return object.Signature{}, fmt.Errorf("read identity: %q is not an identity", s)
	}
	fields := strings.Fields(s[close+1:])
	if len(fields) != 2 {
		return object.Signature{}, fmt.Errorf("read identity: %q has no date", s)
	}
	secs, err := strconv.ParseInt(fields[0], 10, 64)
	loc, ok := parseZone(fields[1])
	if err != nil || !ok {
		return object.Signature{}, fmt.Errorf("read identity: bad date in %q", s)
	}
	return object.Signature{Name: strings.TrimSuffix(s[:open], " "), Email: s[open+1 : close], When: time.Unix(secs, 0).In(loc)}, nil
}

// signature is the identity without git: the GIT_{AUTHOR,COMMITTER}_*
// variables, author.* / committer.*, user.*, $EMAIL, else "debussy
// <debussy@localhost>" (go-git mode: no passwd name, fewer date forms).
func (r *Repo) signature(c gitConfig) (author, committer object.Signature, err error) {
	pick := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	who := func(role string) object.Signature {
		up := strings.ToUpper(role)
		s := object.Signature{
			Name:  pick(r.getenv("GIT_"+up+"_NAME"), c.get(role+".name"), c.get("user.name"), "debussy"),
			Email: pick(r.getenv("GIT_"+up+"_EMAIL"), c.get(role+".email"), c.get("user.email"), r.getenv("EMAIL"), "debussy@localhost"),
			When:  r.now(),
		}
		if v := r.getenv("GIT_" + up + "_DATE"); v != "" {
			t, perr := parseGitDate(v)
			if perr != nil {
				err = errors.Join(err, fmt.Errorf("GIT_%s_DATE=%q: %w", up, v, perr))
			}
			s.When = t
		}
		return s
	}
	return who("author"), who("committer"), err
}

// parseGitDate reads git's internal "[@]<unix seconds> <±hhmm>", RFC 3339
// and RFC 2822 dates.
func parseGitDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if secs, zone, ok := strings.Cut(strings.TrimPrefix(s, "@"), " "); ok {
		n, err := strconv.ParseInt(secs, 10, 64)
		if loc, zok := parseZone(zone); err == nil && zok {
			return time.Unix(n, 0).In(loc), nil
		}
	}
	for _, l := range []string{time.RFC3339, time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Now(), errors.New("invalid date format")
}

func parseZone(z string) (*time.Location, bool) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return nil, false
	}
	h, err1 := strconv.Atoi(z[1:3])
	m, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	off := (h*60 + m) * 60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), true
}

// MadeUpIdentity says, when neither the environment nor git's config names
// the committer (user.name and user.email, or GIT_COMMITTER_*/EMAIL),
// whom debussy's commits will be by — made up from the passwd entry and
// host name as git would, or debussy's fallback — so the user hears it
// once instead of finding "root <debussy@localhost>" in the history. ""
// when git has an identity.
func (r *Repo) MadeUpIdentity(ctx context.Context) string {
	c, err := r.readConfig(ctx)
	if err != nil {
		return "" // the commit will say what is wrong with the config
	}
	set := func(vals ...string) bool {
		for _, v := range vals {
			if strings.TrimSpace(v) != "" {
				return true
			}
		}
		return false
	}
	if set(r.getenv("GIT_COMMITTER_NAME"), c.get("committer.name"), c.get("user.name")) &&
		set(r.getenv("GIT_COMMITTER_EMAIL"), c.get("committer.email"), c.get("user.email"), r.getenv("EMAIL")) {
		return ""
	}
	_, who, err := r.identity(ctx, c)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s <%s>", who.Name, who.Email)
}
