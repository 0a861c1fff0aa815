package gitcommit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// maxFilterStderr bounds what a failing filter's stderr adds to an error.
const maxFilterStderr = 4 << 10

// clean runs driver d's clean side on one file as `git add` does: a
// filter.<d>.process (the long-running protocol, e.g. git-lfs) takes
// precedence over filter.<d>.clean. A failure is an error when
// filter.<d>.required is set; otherwise git stores the file unfiltered, and
// so do we.
func (c *converter) clean(d *filterDriver, name string, content []byte) ([]byte, error) {
	return c.runDriver(d, "clean", d.clean, name, content)
}

// runDriver runs command ("clean" or "smudge"; single is filter.<d>.<command>)
// as git's apply_filter does.
func (c *converter) runDriver(d *filterDriver, command, single, name string, content []byte) ([]byte, error) {
	var out []byte
	var err error
	switch {
	case d.process != "":
		out, err = c.processOne(d, command, name, content)
	case single != "":
		out, err = c.runFilter(single, name, content)
	default:
		err = fmt.Errorf("no %s or process command is configured", command)
	}
	if err == nil {
		return out, nil
	}
	if d.required {
		return nil, fmt.Errorf("%s: %s filter '%s' failed (filter.%s.required): %w", name, command, d.name, d.name, err)
	}
	if d.process != "" || single != "" {
		c.r.log.Warn(command+" filter failed; the file is taken unfiltered, as git does", "path", name, "filter", d.name, "err", err)
	}
	return content, nil
}

// shQuote quotes s for sh as git's sq_quote_buf does ('!' too, for csh
// users).
func shQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '!':
			b.WriteString("'\\")
			b.WriteByte(s[i])
			b.WriteByte('\'')
		default:
			b.WriteByte(s[i])
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// expandFilterCmd substitutes %f with the quoted path and %% with %, leaving
// any other %x alone, like git's strbuf_expand.
func expandFilterCmd(cmd, path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(cmd, '%')
		if i < 0 {
			b.WriteString(cmd)
			return b.String()
		}
		b.WriteString(cmd[:i])
		cmd = cmd[i+1:]
		switch {
		case strings.HasPrefix(cmd, "%"):
			b.WriteByte('%')
			cmd = cmd[1:]
		case strings.HasPrefix(cmd, "f"):
			b.WriteString(shQuote(path))
			cmd = cmd[1:]
		default:
			b.WriteByte('%')
		}
	}
}

// shellCmd runs a configured command the way git's run_command does with
// use_shell.
func (r *Repo) shellCmd(command string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", command+` "$@"`, command)
	cmd.Dir = r.root
	cmd.Env = os.Environ()
	// A filter that leaves a background child holding its pipes must not
	// hang the commit.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// runFilter pipes content through a single-file command (filter.<d>.clean
// or .smudge).
func (c *converter) runFilter(command, name string, content []byte) ([]byte, error) {
	cmd := c.r.shellCmd(expandFilterCmd(command, name))
	var stdout bytes.Buffer
	stderr := &boundedBuffer{max: maxFilterStderr}
	cmd.Stdin = bytes.NewReader(content)
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	// os/exec ignores EPIPE on stdin, as git does: a filter may answer
	// without reading everything.
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("run %q: %w%s", command, err, stderr.suffix())
	}
	return stdout.Bytes(), nil
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	max       int
	buf       bytes.Buffer
	truncated bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.truncated = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *boundedBuffer) String() string {
	s := b.buf.String()
	if b.truncated {
		s += "\n[… output truncated]"
	}
	return s
}

func (b *boundedBuffer) suffix() string {
	if s := strings.TrimSpace(b.String()); s != "" {
		return ": " + s
	}
	return ""
}

// The long-running filter protocol (gitattributes(5), "Long Running Filter
// Process"): clean here, smudge in smudge.go.

const maxPktData = 65516

type filterProcess struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *boundedBuffer
	caps   map[string]bool // the capabilities it announced ("clean", "smudge"), less those aborted
	broken error
}

func writePkt(w io.Writer, data []byte) error {
	if len(data) > maxPktData {
		return fmt.Errorf("packet of %d bytes is too long", len(data))
	}
	_, err := fmt.Fprintf(w, "%04x%s", len(data)+4, data)
	return err
}

func writeFlush(w io.Writer) error {
	_, err := io.WriteString(w, "0000")
	return err
}

// readPkt reads one packet; flush is true for "0000".
func readPkt(r *bufio.Reader) (data []byte, flush bool, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, false, err
	}
	n, err := strconv.ParseUint(string(hdr[:]), 16, 16)
	if err != nil {
		return nil, false, fmt.Errorf("bad packet length %q", hdr[:])
	}
	if n == 0 {
		return nil, true, nil
	}
	if n < 4 {
		return nil, false, fmt.Errorf("bad packet length %d", n)
	}
	data = make([]byte, n-4)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, false, err
	}
	return data, false, nil
}

// readLines reads text packets up to a flush.
func readLines(r *bufio.Reader) ([]string, error) {
	var lines []string
	for {
		data, flush, err := readPkt(r)
		if err != nil {
			return nil, err
		}
		if flush {
			return lines, nil
		}
		lines = append(lines, strings.TrimSuffix(string(data), "\n"))
	}
}

// readStatus applies a status list ("status=…" lines up to a flush) to cur;
// an empty list leaves it unchanged.
func readStatus(r *bufio.Reader, cur string) (string, error) {
	lines, err := readLines(r)
	if err != nil {
		return "", err
	}
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "status="); ok {
			cur = v
		}
	}
	return cur, nil
}

func (c *converter) startProcess(command string) (*filterProcess, error) {
	cmd := c.r.shellCmd(command)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &filterProcess{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), stderr: &boundedBuffer{max: maxFilterStderr}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %q: %w", command, err)
	}
	if err := p.handshake(); err != nil {
		p.stop()
		return nil, fmt.Errorf("start %q: handshake: %w%s", command, err, p.stderr.suffix())
	}
	return p, nil
}

func (p *filterProcess) handshake() error {
	for _, l := range []string{"git-filter-client\n", "version=2\n"} {
		if err := writePkt(p.in, []byte(l)); err != nil {
			return err
		}
	}
	if err := writeFlush(p.in); err != nil {
		return err
	}
	lines, err := readLines(p.out)
	if err != nil {
		return err
	}
	if len(lines) < 2 || lines[0] != "git-filter-server" || lines[1] != "version=2" {
		return fmt.Errorf("unexpected welcome %q", lines)
	}
	for _, l := range []string{"capability=clean\n", "capability=smudge\n", "capability=delay\n"} {
		if err := writePkt(p.in, []byte(l)); err != nil {
			return err
		}
	}
	if err := writeFlush(p.in); err != nil {
		return err
	}
	caps, err := readLines(p.out)
	if err != nil {
		return err
	}
	p.caps = map[string]bool{}
	for _, l := range caps {
		if c, ok := strings.CutPrefix(l, "capability="); ok {
			p.caps[c] = true
		}
	}
	return nil
}

func (p *filterProcess) stop() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

// processOne sends one file through driver d's long-running process,
// started once per commit or checkout, for command ("clean" or "smudge").
func (c *converter) processOne(d *filterDriver, command, name string, content []byte) ([]byte, error) {
	p, err := c.process(d)
	if err != nil {
		return nil, err
	}
	if !p.caps[command] {
		return nil, fmt.Errorf("%q does not offer the %s capability", d.process, command)
	}
	out, status, err := p.filterOne(command, name, content)
	if err != nil {
		// The protocol is out of step: stop the filter, as git does.
		p.broken = fmt.Errorf("run %q: %w%s", d.process, err, p.stderr.suffix())
		return nil, p.broken
	}
	switch status {
	case "success":
		return out, nil
	case "abort":
		delete(p.caps, command)
	}
	return nil, fmt.Errorf("%q answered status=%s for %s%s", d.process, status, name, p.stderr.suffix())
}

// process returns driver d's long-running filter, started once per
// converter; an error once it broke.
func (c *converter) process(d *filterDriver) (*filterProcess, error) {
	p := c.procs[d.process]
	if p == nil {
		var err error
		if p, err = c.startProcess(d.process); err != nil {
			return nil, err
		}
		if c.procs == nil {
			c.procs = map[string]*filterProcess{}
		}
		c.procs[d.process] = p
	}
	return p, p.broken
}

// filterOne sends one file for command ("clean" or "smudge").
func (p *filterProcess) filterOne(command, name string, content []byte) (out []byte, status string, err error) {
	if strings.ContainsAny(name, "\n") || len(name) > maxPktData-len("pathname=\n") {
		return nil, "", fmt.Errorf("path %q cannot be sent to a filter", name)
	}
	w := bufio.NewWriterSize(p.in, 64<<10)
	for _, l := range []string{"command=" + command + "\n", "pathname=" + name + "\n"} {
		if err := writePkt(w, []byte(l)); err != nil {
			return nil, "", err
		}
	}
	if err := writeFlush(w); err != nil {
		return nil, "", err
	}
	for rest := content; len(rest) > 0; {
		n := min(len(rest), maxPktData)
		if err := writePkt(w, rest[:n]); err != nil {
			return nil, "", err
		}
		rest = rest[n:]
	}
	if err := writeFlush(w); err != nil {
		return nil, "", err
	}
	if err := w.Flush(); err != nil {
		return nil, "", err
	}
	status, err = readStatus(p.out, "")
	if err != nil {
		return nil, "", err
	}
	if status != "success" {
		return nil, status, nil
	}
	var buf bytes.Buffer
	for {
		data, flush, err := readPkt(p.out)
		if err != nil {
			return nil, "", err
		}
		if flush {
			break
		}
		buf.Write(data)
	}
	status, err = readStatus(p.out, status)
	if err != nil {
		return nil, "", err
	}
	return buf.Bytes(), status, nil
}
