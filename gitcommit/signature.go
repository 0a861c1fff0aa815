package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
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
			// git would refuse to commit; the work must be saved, so the
			// identity debussy makes up (signature) stands.
			a, c, err := r.signature(cfg)
			if v == "GIT_AUTHOR_IDENT" {
				return a, err
			}
			return c, err
		}
		if err != nil {
			return object.Signature{}, fmt.Errorf("read identity: %w", err)
		}
		return parseIdent(strings.TrimSuffix(string(out), "\n"))
	}
	if author, err = ident("GIT_AUTHOR_IDENT"); err != nil {
		return
	}
	committer, err = ident("GIT_COMMITTER_IDENT")
	return
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

// signature resolves author and committer as `git commit` would: the
// GIT_{AUTHOR,COMMITTER}_{NAME,EMAIL,DATE} variables, then author.* /
// committer.*, then user.*, then $EMAIL; a name or email set nowhere is
// made up from the passwd entry and host name as git makes it up
// (passwdName, defaultEmail); each still missing name or email falls back
// to "debussy <debussy@localhost>" where git would refuse to commit.
// A date git cannot parse is an error, as in git.
func (r *Repo) signature(c gitConfig) (author, committer object.Signature, err error) {
	loc, now := time.Local, r.now()
	pick := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	when := func(envVar string) time.Time {
		v := r.getenv(envVar)
		if v == "" {
			return now
		}
		t, perr := parseGitDate(v, loc)
		if perr != nil {
			err = errors.Join(err, fmt.Errorf("%s=%q: %w", envVar, v, perr))
			return now
		}
		return t
	}
	author = object.Signature{
		Name:  pick(r.getenv("GIT_AUTHOR_NAME"), c.get("author.name"), c.get("user.name"), passwdName(), "debussy"),
		Email: pick(r.getenv("GIT_AUTHOR_EMAIL"), c.get("author.email"), c.get("user.email"), r.getenv("EMAIL"), defaultEmail(), "debussy@localhost"),
		When:  when("GIT_AUTHOR_DATE"),
	}
	committer = object.Signature{
		Name:  pick(r.getenv("GIT_COMMITTER_NAME"), c.get("committer.name"), c.get("user.name"), passwdName(), "debussy"),
		Email: pick(r.getenv("GIT_COMMITTER_EMAIL"), c.get("committer.email"), c.get("user.email"), r.getenv("EMAIL"), defaultEmail(), "debussy@localhost"),
		When:  when("GIT_COMMITTER_DATE"),
	}
	for _, s := range []*object.Signature{&author, &committer} {
		s.Name, s.Email = withoutCrud(s.Name), withoutCrud(s.Email)
	}
	return author, committer, err
}

// passwdName is the name git takes from the user's passwd entry when
// user.name is set nowhere (ident.c copy_gecos): the gecos field up to its
// first comma, "&" standing for the login name capitalised.
var passwdName = sync.OnceValue(func() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	gecos, _, _ := strings.Cut(u.Name, ",")
	if strings.Contains(gecos, "&") && u.Username != "" {
		gecos = strings.ReplaceAll(gecos, "&", strings.ToUpper(u.Username[:1])+u.Username[1:])
	}
	return strings.TrimSpace(gecos)
})

// defaultEmail is the address git makes up when none is set (ident.c
// add_domainname): the login name at the host name, when that name has a
// domain; "" where git would find none and refuse (its getaddrinfo lookup
// of a short name is left out).
var defaultEmail = sync.OnceValue(func() string {
	u, err := user.Current()
	host, herr := os.Hostname()
	if err != nil || herr != nil || u.Username == "" || !strings.Contains(host, ".") {
		return ""
	}
	return u.Username + "@" + host
})

// withoutCrud is git's strbuf_addstr_without_crud (ident.c): spaces,
// control characters and .,:;<>"\' trimmed from both ends, and newlines,
// '<' and '>' dropped inside (they delimit an identity line).
func withoutCrud(s string) string {
	crud := func(c byte) bool { return c <= ' ' || strings.IndexByte(".,:;<>\"\\'", c) >= 0 }
	for len(s) > 0 && crud(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return strings.NewReplacer("\n", "", "<", "", ">", "").Replace(s)
}

// parseGitDate reads the date formats git documents for GIT_AUTHOR_DATE:
// git's internal "<unix seconds> <±hhmm>" (optionally "@"-prefixed), RFC
// 2822 and ISO 8601 (a missing zone is local time).
func parseGitDate(s string, local *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	raw := strings.TrimPrefix(s, "@")
	secs, zone, hasZone := strings.Cut(raw, " ")
	if n, err := strconv.ParseInt(secs, 10, 64); err == nil && (strings.HasPrefix(s, "@") || hasZone) {
		loc := local
		if hasZone {
			l, ok := parseZone(strings.TrimSpace(zone))
			if !ok {
				return time.Time{}, errors.New("invalid date format")
			}
			loc = l
		}
		return time.Unix(n, 0).In(loc), nil
	}
	layouts := []string{
		time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 -0700", "Mon Jan 2 15:04:05 2006 -0700",
		"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05 -0700",
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	for _, l := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006.01.02 15:04:05", "Mon, 2 Jan 2006 15:04:05"} {
		if t, err := time.ParseInLocation(l, s, local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("invalid date format")
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
