package sandbox

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// Two things make a refusal plain to the agent and the run's log. Before a
// tool runs, debussy's PreToolUse hook refuses what the boundary would
// refuse anyway, with a sentence saying why (Refusal): the agent does not
// retry an EROFS it cannot explain, and the log says "boundary". After a
// tool ran, a result that carries the kernel's or the proxy's refusal
// (Refused) is logged as the boundary's, not as an unexplained tool error.
// Neither is the boundary itself: bubblewrap and claude's sandbox are.

// input is the part of a tool's input the boundary reads.
type input struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Command      string `json:"command"`
}

func parseInput(raw json.RawMessage) input {
	var in input
	_ = json.Unmarshal(raw, &in)
	return in
}

// Checks are the boundary's checks of one phase scope's tool calls
// (Refusal, Refused), which run at every call: the scope's places are
// resolved once, here, not at each call.
type Checks struct {
	b *Boundary
	s Scope // as given: a relative path is the tree's as claude sees it
	// The scope's places with their symlinks resolved.
	work, state, run string
	readOnly         []string
	writable         []string // the bubblewrap layout's writable places
}

// Checks returns the checks of scope s's tool calls.
func (b *Boundary) Checks(s Scope) *Checks {
	c := &Checks{b: b, s: s, work: resolved(s.Work), writable: []string{b.claudeReal}}
	if s.State != "" {
		c.state = resolved(s.State)
	}
	if s.Run != "" {
		c.run = resolved(s.Run)
	}
	for _, ro := range s.ReadOnly {
		c.readOnly = append(c.readOnly, resolved(ro))
	}
	for _, p := range append([]string{s.Work, s.Run, b.tempOf(s)}, s.Git...) {
		if p != "" {
			c.writable = append(c.writable, resolved(p))
		}
	}
	c.writable = append(c.writable, b.writeReal...)
	return c
}

// Refusal is why the boundary refuses tool's call before it runs, "" to
// let it run: a file tool writing outside the writable places or into the
// repository's Claude settings (read by later sessions: they could loosen
// claude's own sandbox), a file tool reading a hidden path, WebFetch of a
// host sandbox_allow_domains does not list (claude fetches it itself,
// outside its sandbox's proxy).
func (c *Checks) Refusal(tool string, raw json.RawMessage) string {
	b := c.b
	in := parseInput(raw)
	switch tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		p := c.abs(cmp.Or(in.FilePath, in.NotebookPath))
		if p == "" {
			return ""
		}
		if w := resolvedPrefix(p); !c.canWrite(w) {
			return fmt.Sprintf("debussy sandbox: %s is outside the places this run may write (%s); nothing there can be written, by any tool. "+
				"Write inside the repository, or in $TMPDIR for scratch files.", p, b.describeWritable())
		} else if c.settingsFile(w) {
			return fmt.Sprintf("debussy sandbox: %s holds Claude settings that would loosen the sandbox of later sessions; it is read-only for this run.", p)
		} else if c.gitCode(w) {
			return fmt.Sprintf("debussy sandbox: %s is git's config or hooks, which run outside the boundary when debussy commits; it is read-only for this run.", p)
		}
	case "Read", "NotebookRead", "Grep", "Glob", "LS":
		for _, p := range []string{in.FilePath, in.NotebookPath, in.Path, globRoot(in.Pattern)} {
			if p = c.abs(p); p != "" && b.isHidden(resolvedPrefix(p)) {
				return fmt.Sprintf("debussy sandbox: %s is a hidden credential path in this run (%s); it cannot be read, by any tool.", p, "sandbox_deny_read")
			}
		}
	case "WebFetch":
		u, err := url.Parse(in.URL)
		if err == nil && u.Hostname() != "" && !AllowsHost(b.policy.AllowDomains, u.Hostname()) {
			return fmt.Sprintf("debussy sandbox: %s is not in sandbox_allow_domains (%s); this run reaches no other host.", u.Hostname(), b.describeDomains())
		}
	}
	return ""
}

// Refused is the boundary's refusal that tool's result shows, "" when it
// shows none: "write" (a read-only file system: outside the writable
// places), "read" (a hidden path the call named came back missing or
// denied), "network" (a command's connection refused, a host not resolved,
// the proxy's refusal).
func (c *Checks) Refused(tool string, raw json.RawMessage, result string) string {
	if result == "" {
		return ""
	}
	if roFS.MatchString(result) {
		return "write"
	}
	in := parseInput(raw)
	named := in.Command + "\n" + cmp.Or(in.FilePath, in.NotebookPath, in.Path, in.Pattern)
	if missing.MatchString(result) && c.namesHidden(named) {
		return "read"
	}
	if tool == "Bash" && netRefused.MatchString(result) {
		return "network"
	}
	return ""
}

var (
	roFS       = regexp.MustCompile(`Read-only file system|\bEROFS\b`)
	missing    = regexp.MustCompile(`No such file or directory|does not exist|Permission denied|\bENOENT\b|\bEACCES\b`)
	netRefused = regexp.MustCompile(`(?i)CONNECT tunnel failed|Couldn't connect to server|Could not resolve host|Network is unreachable|` +
		`Temporary failure in name resolution|Name or service not known|Connection refused|getaddrinfo|not in sandbox_allow_domains|ECONNREFUSED|ENOTFOUND`)
)

// namesHidden reports whether text names a hidden path, as typed (~/.ssh)
// or absolute.
func (c *Checks) namesHidden(text string) bool {
	b := c.b
	for _, d := range b.deny {
		if strings.Contains(text, d) {
			return true
		}
		if rel, err := filepath.Rel(b.home, d); err == nil && !strings.HasPrefix(rel, "..") && strings.Contains(text, "~/"+rel) {
			return true
		}
	}
	for _, f := range strings.Fields(text) {
		if p := c.abs(strings.Trim(f, `"'`)); p != "" && b.isHidden(resolvedPrefix(p)) {
			return true
		}
	}
	return false
}

func (c *Checks) canWrite(p string) bool {
	// .debussy is read-only but for the run's dir (and a worktree in it).
	if c.state != "" && inside(p, c.state) {
		if !(c.run != "" && inside(p, c.run)) && !(within(c.work, c.state) && inside(p, c.work)) {
			return false
		}
	}
	for _, w := range c.writable {
		if inside(p, w) {
			for _, name := range protectedClaudeFiles() {
				if inside(p, filepath.Join(c.b.claudeReal, name)) {
					return false
				}
			}
			return !c.b.isHidden(p)
		}
	}
	return false
}

func (b *Boundary) isHidden(p string) bool {
	for _, d := range b.denyReal {
		if inside(p, d) {
			return true
		}
	}
	return inside(p, filepath.Join(b.claudeReal, ".credentials.json"))
}

// gitCode reports whether p is in one of the scope's read-only git places.
func (c *Checks) gitCode(p string) bool {
	for _, ro := range c.readOnly {
		if inside(p, ro) {
			return true
		}
	}
	return false
}

// settingsFile reports whether p is one of the Claude settings files of
// the scope's tree, which claude reads at the start of each session.
func (c *Checks) settingsFile(p string) bool {
	dir := filepath.Join(c.work, ".claude")
	return p == filepath.Join(dir, "settings.json") || p == filepath.Join(dir, "settings.local.json")
}

// abs is p as claude resolves it: ~ expanded, relative to the tree.
func (c *Checks) abs(p string) string {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return ""
	case p == "~" || strings.HasPrefix(p, "~/"):
		return Expand(p, c.b.home)
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(c.s.Work, p)
}

// resolvedPrefix resolves the symlinks of p's longest existing prefix:
// the path a write would land on, whether or not the file exists yet.
func resolvedPrefix(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// globRoot is the directory part of an absolute or ~ glob before its
// first wildcard; "" for a relative one (it stays in the tree).
func globRoot(pattern string) string {
	if !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(pattern, "~") {
		return ""
	}
	if i := strings.IndexAny(pattern, "*?[{"); i >= 0 {
		pattern = pattern[:i]
	}
	return pattern
}

func (b *Boundary) describeWritable() string {
	w := "the repository or the phase's worktree, $TMPDIR"
	if len(b.policy.Write) > 0 {
		w += ", " + strings.Join(b.policy.Write, ", ")
	}
	return w
}

func (b *Boundary) describeDomains() string {
	if len(b.policy.AllowDomains) == 0 {
		return "it lists none"
	}
	return "it lists " + strings.Join(b.policy.AllowDomains, ", ")
}
