package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Boundary is one run's sandbox: the same layout for every phase's claude
// sessions and gates, each within its Scope. Close removes its temp dirs
// and stops its proxy.
type Boundary struct {
	bwrap, socat string
	policy       Policy
	home         string
	root         bool     // as root, the capabilities that undo mounts are dropped
	write        []string // sandbox_write, expanded
	deny         []string // the deny list, expanded: defaults, sandbox_deny_read, other homes
	claudeDir    string   // the CLI's config dir: $CLAUDE_CONFIG_DIR or ~/.claude
	// denyReal, claudeReal and writeReal are deny, claudeDir and write
	// with their symlinks resolved, once: Refusal asks them at every tool
	// call.
	denyReal   []string
	claudeReal string
	writeReal  []string
	claudeJSON string // ~/.claude.json, beside it unless CLAUDE_CONFIG_DIR is set
	temp       string // the run's private temp root
	// unixSockets: the CLI's seccomp helper cannot run (CLIHelperProblem),
	// so its sandbox is told to skip the socket filter that needs it.
	unixSockets bool

	// dial is how the proxy reaches an allowed host; nil: the network.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	proxy *Proxy

	// Notes are what the run should say about the boundary it got.
	Notes []string
}

// Options are what New needs besides what the machine offers.
type Options struct {
	Policy Policy
	// Getenv reads HOME, CLAUDE_CONFIG_DIR and TMPDIR.
	Getenv func(string) string
	Root   bool // running as root
	// HomeRoot is where users' homes are (default /home), for OtherHomes.
	HomeRoot string
	// AccountHome is the user's home as the account database says (it
	// differs from HOME when HOME is set elsewhere); "" looks it up.
	AccountHome string
	// CLIHelperBroken: claude's seccomp helper is not executable
	// (CLIHelperProblem); its sandbox then runs without its socket filter.
	CLIHelperBroken bool
}

// New makes a run's boundary from a: its private temp dir is created now.
// The caches of sandbox_write are created when missing (a build cache the
// run's tools fill, e.g. Go's), so that a tool finds its cache writable.
func New(a Availability, o Options) (*Boundary, error) {
	if a.Bwrap == "" {
		return nil, fmt.Errorf("%w: no bubblewrap", ErrUnavailable)
	}
	home := o.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return nil, fmt.Errorf("%w: HOME is not an absolute path (%q): the boundary hides credential files under it", ErrUnavailable, home)
	}
	b := &Boundary{bwrap: a.Bwrap, socat: a.Socat, policy: o.Policy, home: home, root: o.Root, unixSockets: o.CLIHelperBroken}
	for _, p := range o.Policy.Write {
		w := Expand(p, home)
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("sandbox_write: %q is neither absolute nor under ~", p)
		}
		if _, err := os.Stat(w); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(w, 0o755); err != nil {
				// A cache that cannot be made is not writable in the run
				// either: the tool that needs it says so, the rest holds.
				b.Notes = append(b.Notes, fmt.Sprintf("sandbox_write %s is not writable in this run: %v", p, err))
				continue
			}
		}
		b.write = append(b.write, w)
	}
	// ~ is $HOME, and also the account's home when HOME points elsewhere:
	// its credentials are the user's too.
	homes := []string{home}
	account := o.AccountHome
	if account == "" {
		if u, err := user.Current(); err == nil {
			account = u.HomeDir
		}
	}
	if filepath.IsAbs(account) && resolved(account) != resolved(home) {
		homes = append(homes, account)
	}
	for _, p := range append(DefaultDenyRead(), o.Policy.DenyRead...) {
		for _, h := range homes {
			if d := Expand(p, h); filepath.IsAbs(d) && !slices.Contains(b.deny, d) {
				b.deny = append(b.deny, d)
			}
		}
	}
	b.deny = append(b.deny, OtherHomes(o.HomeRoot, homes...)...)
	b.claudeDir, b.claudeJSON = o.Getenv("CLAUDE_CONFIG_DIR"), filepath.Join(home, ".claude.json")
	if b.claudeDir == "" {
		b.claudeDir = filepath.Join(home, ".claude")
	} else {
		b.claudeJSON = filepath.Join(b.claudeDir, ".claude.json")
	}
	// The CLI creates it on its first run; inside the boundary it could
	// not (the home is read-only), and it keeps its sessions there.
	if err := os.MkdirAll(b.claudeDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", b.claudeDir, err)
	}
	b.claudeReal = resolved(b.claudeDir)
	for _, d := range b.deny {
		b.denyReal = append(b.denyReal, resolved(d))
	}
	for _, w := range b.write {
		b.writeReal = append(b.writeReal, resolved(w))
	}
	// Likewise its global config file: 2.1.112 hangs at start, before any
	// output, when it cannot create it (measured); later CLIs do without.
	// An empty object is what it fills in on a first run.
	if _, err := os.Lstat(b.claudeJSON); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(b.claudeJSON, []byte("{}\n"), 0o600); err != nil {
			return nil, fmt.Errorf("create %s: %w", b.claudeJSON, err)
		}
	}
	t, err := os.MkdirTemp(tempParent(o.Getenv("TMPDIR")), "dsbx-")
	if err != nil {
		return nil, fmt.Errorf("create the sandbox's temp dir: %w", err)
	}
	b.temp = t
	return b, nil
}

// maxTempDir bounds the length of a scope's temp dir: claude's sandbox
// puts its proxy's unix sockets there ("claude-http-<16 hex>.sock"), and a
// socket path has at most 107 bytes (measured: under a 80-byte TMPDIR every
// command failed "Failed to create bridge sockets after 5 attempts").
const maxTempDir = 64

// tempParent is where the run's temp dir goes: $TMPDIR, unless its path
// is too long for the sockets claude's sandbox makes there; then /tmp.
func tempParent(tmpdir string) string {
	if tmpdir == "" {
		tmpdir = os.TempDir()
	}
	// dsbx-<10 digits>/p-<id of up to ~12>
	if len(tmpdir)+len("/dsbx-1234567890/p-123456789012") <= maxTempDir {
		return tmpdir
	}
	return "/tmp"
}

// Close stops the proxy and removes the temp dirs.
func (b *Boundary) Close() error {
	b.mu.Lock()
	p := b.proxy
	b.proxy = nil
	b.mu.Unlock()
	if p != nil {
		p.Close()
	}
	return os.RemoveAll(b.temp)
}

// Policy is what the boundary was made from, as configured.
func (b *Boundary) Policy() Policy { return b.policy }

// Scope is what one phase may write beyond the boundary's own places.
type Scope struct {
	Name  string   // the phase's id: its temp dir is named after it
	Work  string   // the phase's tree: the repository, or its worktree
	State string   // .debussy: read-only, but for Run
	Run   string   // .debussy/runs/<run>: debussy done, progress and handoff write here
	Git   []string // git dirs the tree's git writes to (a worktree's common dir)
	// ReadOnly are places inside the writable ones that stay read-only:
	// git's hooks and config (GitCode), which run outside the boundary
	// when debussy commits.
	ReadOnly []string
}

// Command is how to start a program inside the boundary: Wrapper goes
// before its argv, Env is set in its environment.
type Command struct {
	Wrapper []string
	Env     map[string]string
	// Settings is the claude CLI's own sandbox block for --settings (for
	// claude only).
	Settings map[string]any
}

// Temp is the scope's private temp dir (created).
func (b *Boundary) Temp(s Scope) (string, error) {
	t := b.tempOf(s)
	if err := os.MkdirAll(t, 0o700); err != nil {
		return "", fmt.Errorf("create the phase's temp dir: %w", err)
	}
	return t, nil
}

// Claude is how to run claude for scope s: in bubblewrap with its config
// home writable, and with the CLI's own sandbox on for its commands'
// network.
func (b *Boundary) Claude(s Scope) (Command, error) {
	temp, err := b.Temp(s)
	if err != nil {
		return Command{}, err
	}
	args, err := b.args(s, temp, true)
	if err != nil {
		return Command{}, err
	}
	return Command{Wrapper: append(args, "--"), Env: map[string]string{"TMPDIR": temp}, Settings: b.claudeSettings(s, temp)}, nil
}

// Gate is how to run a gate for scope s: the same layout, in a network
// namespace of its own: no network, or the allowed domains through the
// run's proxy (bridged in by socat).
func (b *Boundary) Gate(s Scope) (Command, error) {
	temp, err := b.Temp(s)
	if err != nil {
		return Command{}, err
	}
	args, err := b.args(s, temp, false)
	if err != nil {
		return Command{}, err
	}
	args = append(args, "--unshare-net")
	env := map[string]string{"TMPDIR": temp}
	if len(b.policy.AllowDomains) == 0 {
		return Command{Wrapper: append(args, "--"), Env: env}, nil
	}
	sock, err := b.proxySocket()
	if err != nil {
		return Command{}, err
	}
	proxyURL := fmt.Sprintf("http://127.0.0.1:%d", proxyPort)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		env[k] = proxyURL
	}
	env["NO_PROXY"], env["no_proxy"] = "localhost,127.0.0.1,::1", "localhost,127.0.0.1,::1"
	env[proxyEnv] = sock
	return Command{Wrapper: append(args, "--", "/bin/sh", "-c", bridgeScript(b.socat), "debussy-gate"), Env: env}, nil
}

// mount is one bubblewrap mount of the layout.
type mount struct {
	path string
	kind mountKind
}

type mountKind int

// Stronger kinds win over weaker ones on the same path.
const (
	writable mountKind = iota
	readOnly
	hidden
)

// args is bubblewrap's command line up to (not including) "--": the whole
// filesystem read-only; the writable places bound over it; .debussy and the
// CLI's own settings read-only again; the credential paths hidden. Mounts
// go from the shallowest path to the deepest, so a deeper one wins: the
// run's state is writable inside a read-only .debussy inside a writable
// repository, a credential path stays hidden inside a writable cache.
func (b *Boundary) args(s Scope, temp string, claude bool) ([]string, error) {
	if s.Work == "" {
		return nil, errors.New("sandbox: no work tree")
	}
	var ms []mount
	rw := func(p string, required bool) error {
		r, err := filepath.EvalSymlinks(p)
		switch {
		case err == nil:
			ms = append(ms, mount{r, writable})
		case required:
			return fmt.Errorf("sandbox: %w", err)
		}
		return nil
	}
	for _, p := range append([]string{s.Work, temp}, s.Git...) {
		if err := rw(p, true); err != nil {
			return nil, err
		}
	}
	if s.Run != "" {
		if err := os.MkdirAll(s.Run, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if err := rw(s.Run, true); err != nil {
			return nil, err
		}
	}
	for _, p := range b.write {
		_ = rw(p, false) // created by New; gone since: nothing to bind
	}
	for _, p := range append([]string{s.State}, s.ReadOnly...) {
		if r, err := filepath.EvalSymlinks(p); p != "" && err == nil {
			ms = append(ms, mount{r, readOnly})
		}
	}
	if claude {
		_ = rw(b.claudeDir, false)
		// Only the CLI of 2.1.112 writes it in place once it cannot
		// rename a temp file over it (it hangs if it cannot); later ones
		// skip the write.
		_ = rw(b.claudeJSON, false)
		for _, name := range protectedClaudeFiles() {
			if r, err := filepath.EvalSymlinks(filepath.Join(b.claudeDir, name)); err == nil {
				ms = append(ms, mount{r, readOnly})
			}
		}
	}
	for _, p := range b.deny {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			ms = append(ms, mount{r, hidden})
		}
	}
	ms = layout(ms)

	args := []string{b.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc"}
	var remount []string
	for _, m := range ms {
		switch m.kind {
		case writable:
			args = append(args, "--bind", m.path, m.path)
		case readOnly:
			args = append(args, "--ro-bind", m.path, m.path)
		case hidden:
			fi, err := os.Stat(m.path)
			if err != nil {
				continue
			}
			if fi.IsDir() {
				args = append(args, "--tmpfs", m.path)
				remount = append(remount, m.path)
			} else {
				args = append(args, "--ro-bind", "/dev/null", m.path)
			}
		}
	}
	// Last, once the binds inside them have their mount points.
	for _, p := range remount {
		args = append(args, "--remount-ro", p)
	}
	work, _ := filepath.EvalSymlinks(s.Work)
	args = append(args, "--chdir", work)
	if b.root {
		args = append(args, capDrops()...)
	}
	return args, nil
}

// layout orders mounts shallowest first (a deeper one is mounted over a
// shallower one), keeping for a path mounted twice the strongest kind.
func layout(ms []mount) []mount {
	best := map[string]mountKind{}
	var order []string
	for _, m := range ms {
		k, seen := best[m.path]
		if !seen {
			order = append(order, m.path)
		}
		if !seen || m.kind > k {
			best[m.path] = m.kind
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		return strings.Count(a, string(filepath.Separator)) - strings.Count(b, string(filepath.Separator))
	})
	out := make([]mount, len(order))
	for i, p := range order {
		out[i] = mount{p, best[p]}
	}
	return out
}

// protectedClaudeFiles are the entries of the CLI's config dir that decide
// what later sessions run or read (hooks, permissions, instructions,
// commands): read-only inside the boundary, so an agent cannot plant
// something that runs unbounded in a later session outside it. The rest of
// the dir (sessions, transcripts, credentials refresh) stays writable.
func protectedClaudeFiles() []string {
	return []string{"settings.json", "settings.local.json", "CLAUDE.md", "commands", "agents", "skills", "hooks", "output-styles"}
}

// capDrops are the capabilities root keeps inside bubblewrap that would
// undo the boundary: mounting (SYS_ADMIN), reading by file handle past the
// mount namespace (DAC_READ_SEARCH: open_by_handle_at), raw devices
// (MKNOD, SYS_RAWIO), the host's shared network stack (NET_ADMIN), other
// processes and the kernel (SYS_PTRACE, SYS_MODULE). SETFCAP stays: claude's
// own bwrap needs it to map root into its user namespace (measured: with
// every capability dropped, its commands fail "setting up uid map").
func capDrops() []string {
	var out []string
	for _, c := range []string{"CAP_SYS_ADMIN", "CAP_DAC_READ_SEARCH", "CAP_MKNOD", "CAP_SYS_RAWIO", "CAP_NET_ADMIN", "CAP_SYS_PTRACE", "CAP_SYS_MODULE"} {
		out = append(out, "--cap-drop", c)
	}
	return out
}

// tempOf is scope s's own temp dir, the only one of b.temp's it sees.
func (b *Boundary) tempOf(s Scope) string {
	return filepath.Join(b.temp, "p-"+scopeName.Replace(s.Name))
}

// scopeName makes a scope's name one path element.
var scopeName = strings.NewReplacer("/", "_", "\x00", "_", "..", "_")

// GitDirs are the git dirs outside work that git in work writes to: for a
// linked worktree, its own git dir and the common one (objects, refs) in
// the main repository; none for a repository whose .git is inside it.
func GitDirs(work string) []string {
	data, err := os.ReadFile(filepath.Join(work, ".git"))
	if err != nil {
		return nil // a directory (inside work), or no repository
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(work, dir)
	}
	dirs := []string{filepath.Clean(dir)}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	var out []string
	for _, d := range dirs {
		if !inside(resolved(d), resolved(work)) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
