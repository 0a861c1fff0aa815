package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Host is what Check looks at; tests supply their own.
type Host struct {
	GOOS string // runtime.GOOS when ""
	// Path is the PATH bubblewrap and socat are looked up on.
	Path string
	// Root: debussy runs as root (os.Geteuid() == 0).
	Root bool
	// Probe runs argv and returns its error, stderr included; nil runs it.
	Probe func(ctx context.Context, argv []string) error
	// Places are what a bounded run's commands must see, by what they are
	// ("the repository", "debussy"): see underDev.
	Places []Place
}

// Place is one path a bounded run's commands must see.
type Place struct{ What, Path string }

// Availability is what the machine offers for a boundary.
type Availability struct {
	Bwrap, Socat string // absolute paths when found
	// Problem says why no run can be bounded here, naming what to do;
	// "" when one can.
	Problem string
}

// Install is how to get the tools on the usual distributions.
const Install = "apt-get install bubblewrap socat (Debian, Ubuntu), dnf install bubblewrap socat (Fedora), pacman -S bubblewrap socat (Arch)"

// probeTimeout bounds the check that bubblewrap works here.
const probeTimeout = 10 * time.Second

// Check says whether a run can be bounded here: Linux, bubblewrap and
// socat on PATH (claude's own sandbox needs both), and a bubblewrap that
// can create a sandbox, and another inside it (claude's, for its
// commands' network). Where unprivileged user namespaces are off (a
// sysctl, Ubuntu's AppArmor restriction, some containers), bwrap is
// installed yet fails: the probe finds that in milliseconds, before any
// session.
func Check(ctx context.Context, h Host) Availability {
	goos := h.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "linux":
	case "darwin":
		return Availability{Problem: "debussy cannot bound a run on macOS yet (no Seatbelt profile): run it in a container or VM to bound it"}
	default:
		return Availability{Problem: fmt.Sprintf("debussy knows no sandbox on %s: run it in a container or VM to bound it", goos)}
	}
	var a Availability
	if p := underDev(h.Places); p != "" {
		a.Problem = p
		return a
	}
	var missing []string
	if a.Bwrap = lookPath("bwrap", h.Path); a.Bwrap == "" {
		missing = append(missing, "bubblewrap (bwrap)")
	}
	if a.Socat = lookPath("socat", h.Path); a.Socat == "" {
		missing = append(missing, "socat")
	}
	if len(missing) > 0 {
		a.Problem = fmt.Sprintf("%s not on PATH: install %s — %s", strings.Join(missing, " and "), verb(len(missing)), Install)
		return a
	}
	probe := h.Probe
	if probe == nil {
		probe = runProbe
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := probe(pctx, probeArgs(a.Bwrap, h.Root)); err != nil {
		a.Problem = fmt.Sprintf("bubblewrap cannot create a sandbox (and another inside it) here: %v — unprivileged user namespaces may be off "+
			"(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or this container forbids them", err)
	}
	return a
}

// underDev says which place lives under /dev, "" when none does. claude's
// own sandbox mounts a fresh /dev for each command (bwrap --dev /dev, and
// it skips write paths under /dev: read from the 2.1.197 and 2.1.332
// binaries), so a repository, a debussy or a HOME under /dev/shm (a tmpfs
// many CI setups use for TMPDIR) is not there for the agent's commands:
// `debussy done` is "command not found" and the tree is empty. Measured:
// every end-to-end run with TMPDIR=/dev/shm failed its first Bash call.
func underDev(places []Place) string {
	for _, p := range places {
		if p.Path == "" {
			continue
		}
		r, err := filepath.EvalSymlinks(p.Path)
		if err != nil {
			r = filepath.Clean(p.Path)
		}
		if r == "/dev" || strings.HasPrefix(r, "/dev/") {
			return fmt.Sprintf("%s (%s) is under /dev, which claude's own sandbox replaces with a fresh /dev for every command, "+
				"so its commands could not see it: move it off /dev (a TMPDIR on /dev/shm puts it there)", p.What, r)
		}
	}
	return ""
}

func verb(n int) string {
	if n > 1 {
		return "them"
	}
	return "it"
}

// probeArgs is a sandbox as debussy makes one for claude, running
// bubblewrap again inside as claude's own sandbox runs it for a command.
func probeArgs(bwrap string, root bool) []string {
	args := []string{bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc"}
	if root {
		args = append(args, capDrops()...)
	}
	return append(args, "--", bwrap, "--unshare-user", "--unshare-net", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--", "true")
}

func runProbe(ctx context.Context, argv []string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			return fmt.Errorf("%s", first)
		}
		return err
	}
	return nil
}

// lookPath finds an executable name in path's directories; "" when none.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry names whatever the cwd holds
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Decision is what a run does about its boundary.
type Decision struct {
	Bounded bool
	// Line says it in one line, for the run's first lines, its dry run,
	// check and doctor.
	Line string
}

// Decide is mode applied to what the machine offers: off never bounds;
// auto bounds where it can and says so when it cannot; on refuses a
// machine that cannot (ErrUnavailable, the problem naming what to
// install).
func Decide(mode Mode, a Availability, p Policy) (Decision, error) {
	switch {
	case mode == Off:
		return Decision{Line: "sandbox off: the agent's tools and the gates run unbounded, with your files and network (sandbox: off)"}, nil
	case a.Problem == "" && a.Bwrap != "":
		return Decision{Bounded: true, Line: "sandbox " + string(mode) + ": bubblewrap bounds the agent's tools and the gates: " + Describe(p)}, nil
	case mode == On:
		return Decision{}, &unavailableError{"sandbox: on, but " + a.Problem + " (or set sandbox: auto to run unbounded where it cannot)"}
	}
	return Decision{Line: "sandbox auto: this run is NOT bounded: " + a.Problem + " (sandbox: off silences this)"}, nil
}

// Describe says what a bounded run may do, in one line.
func Describe(p Policy) string {
	write := "the repository (or the phase's worktree), its .debussy/ run state and a private temp dir"
	if len(p.Write) > 0 {
		write += ", " + strings.Join(p.Write, ", ")
	}
	net := "no network for commands and gates"
	if len(p.AllowDomains) > 0 {
		net = "network for commands and gates only to " + strings.Join(p.AllowDomains, ", ")
	}
	deny := "credential files (~/.ssh, ~/.aws, … and other users' homes) hidden"
	if len(p.DenyRead) > 0 {
		deny = "credential files (~/.ssh, ~/.aws, …, " + strings.Join(p.DenyRead, ", ") + " and other users' homes) hidden"
	}
	return "writes only to " + write + "; " + deny + "; " + net
}

// unavailableError is sandbox: on refused: its sentence says why and what
// to install; it is ErrUnavailable.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }
func (e *unavailableError) Unwrap() error { return ErrUnavailable }
