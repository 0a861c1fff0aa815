package tests

import (
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/debussy-dev/debussy/internal/ptytest"
)

// onTerminal runs debussy with args on a pseudo-terminal of 40×160, as in
// a shell: the terminal is its controlling terminal and it runs in the
// foreground. Whenever what it wrote so far contains a key of answers
// (escape sequences stripped), that answer is typed once. It returns all
// it wrote and how it ended.
func (h *harness) onTerminal(t *testing.T, answers map[string]string, args ...string) (string, error) {
	t.Helper()
	// A terminal, wherever the tests run: no CI, no opt-out, colours on.
	var env []string
	for _, kv := range h.Env {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "CI", "TERM", "NO_COLOR", "DEBUSSY_NO_VIEW", "GITHUB_ACTIONS":
		default:
			env = append(env, kv)
		}
	}
	h.Env = append(env, "TERM=xterm-256color")

	master, tty := ptytest.Open(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 160}); err != nil {
		t.Fatalf("set terminal size: %v", err)
	}
	screen := make(chan string)
	go func() {
		// Until every writer of the terminal has closed it (EIO on Linux).
		var all []byte
		typed := map[string]bool{}
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			all = append(all, buf[:n]...)
			for prompt, answer := range answers {
				if !typed[prompt] && strings.Contains(stripANSI(string(all)), prompt) {
					typed[prompt] = true
					_, _ = master.Write([]byte(answer))
				}
			}
			if err != nil {
				screen <- string(all)
				return
			}
		}
	}()
	cmd, _, _ := h.command(args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// A terminal query would be answered only in the foreground.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err := cmd.Run()
	tty.Close()
	out := <-screen
	t.Logf("terminal:\n%q", out)
	return out, err
}
