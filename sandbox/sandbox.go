// Package sandbox is the boundary an unattended run works in: which files
// the agent's tools and the plan's gates may write, which they may not
// read, and which hosts their commands may reach.
//
// On Linux it is two layers, chosen by measurement (docs/sandbox.md):
//
//   - bubblewrap around the claude process itself (and around each gate):
//     the whole filesystem read-only, writable binds of the phase's tree,
//     the run's state, a private temp dir, the configured caches and the
//     CLI's own config home; an empty tmpfs (or /dev/null) over the
//     credential paths. It keeps the network namespace, so claude reaches
//     its API. This bounds every tool, not only Bash: the CLI's Write and
//     Edit tools run inside claude's own process, which its sandbox leaves
//     open (measured: an absolute /tmp path was "File created
//     successfully" on 2.1.197 and 2.1.332), and reads are open there by
//     default;
//   - the CLI's own sandbox (sandbox.enabled in --settings) inside it, for
//     the network of Bash and its children: claude's bwrap nests inside
//     debussy's (measured on 2.1.112, 2.1.197 and 2.1.332) and cuts every
//     connection but the allowed domains, through its proxy.
//
// Permission deny rules were measured too: bypassPermissions honours them
// on all three versions, but they can only name paths to refuse, never "all
// but the repository", so they cannot bound writes.
//
// Gates run in the same bubblewrap layout with a network namespace of
// their own: no network, or only the allowed domains through debussy's
// proxy (proxy.go).
package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is the `sandbox:` key: whether a run is bounded.
type Mode string

// Modes.
const (
	// Auto bounds the run where the machine can (Linux with bubblewrap and
	// socat) and says in one line at the start when it cannot.
	Auto Mode = "auto"
	// On refuses to start a run it cannot bound (exit 2, naming what to
	// install).
	On Mode = "on"
	// Off runs the agent and the gates unbounded, as before the sandbox.
	Off Mode = "off"
)

// ErrUnavailable is wrapped when `sandbox: on` meets a machine that cannot
// bound the run.
var ErrUnavailable = errors.New("sandbox unavailable")

// DefaultDenyRead are the credential paths no tool and no gate may read,
// whatever the configuration adds (sandbox_deny_read); other users' homes
// are hidden too (OtherHomes).
func DefaultDenyRead() []string {
	return []string{
		"~/.ssh", "~/.aws", "~/.config/gcloud", "~/.netrc", "~/.docker/config.json",
		"~/.gnupg", "~/.kube", "~/.azure", "~/.config/gh", "~/.git-credentials", "~/.pypirc",
	}
}

// Policy is what a bounded run allows, as configured: paths still as
// written (~ not expanded), so the agent can be told them as the user
// wrote them.
type Policy struct {
	Write        []string // sandbox_write: more writable paths (caches)
	DenyRead     []string // sandbox_deny_read: more hidden paths, beside DefaultDenyRead
	AllowDomains []string // sandbox_allow_domains: hosts commands may reach
}

// Expand turns "~" and "~/x" into paths under home; other paths are
// cleaned. A path that is neither absolute nor under ~ is returned as is,
// for the caller's validation to refuse (CheckPath).
func Expand(p, home string) string {
	switch {
	case p == "~":
		return filepath.Clean(home)
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return p
}

// AllowsHost reports whether host (no port) is in domains: equal, or a
// subdomain of a "*.example.com" entry. Case does not matter.
func AllowsHost(domains []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range domains {
		d = strings.ToLower(d)
		if rest, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if host == d {
			return true
		}
	}
	return false
}

// OtherHomes are the home directories of other users the run must not
// read: the directories in homeRoot ("" is /home) other than the user's own
// homes (mine: $HOME and the account's home, which differ when HOME is
// set elsewhere) and their ancestors, and /root unless it is one of mine.
func OtherHomes(homeRoot string, mine ...string) []string {
	root := homeRoot
	if root == "" {
		root = "/home"
	}
	own := func(p string) bool {
		p = resolved(p)
		for _, h := range mine {
			if h = resolved(h); h != "" && inside(h, p) {
				return true
			}
		}
		return false
	}
	var out []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if fi, err := os.Stat(p); err == nil && fi.IsDir() && !own(p) {
			out = append(out, p)
		}
	}
	if homeRoot == "" && !own("/root") {
		out = append(out, "/root")
	}
	slices.Sort(out)
	return out
}

// within reports whether p lies strictly below dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// inside reports whether p is dir or lies below it.
func inside(p, dir string) bool { return p == dir || within(p, dir) }

// resolved is p with its symlinks resolved, or p cleaned when it does not
// exist (yet).
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
