package history

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// Claude Code keeps each session's transcript in
// <config dir>/projects/<folder>/<session id>.jsonl, the folder being the
// session's working directory (symlinks resolved) escaped by ProjectFolder;
// the config dir is $CLAUDE_CONFIG_DIR, else ~/.claude. Measured on 2.1.112,
// 2.1.197 and 2.1.332: a subagent's lines go to
// <session id>/subagents/agent-<id>.jsonl beside it (older versions wrote
// them inline, marked isSidechain); a compaction is a system line of
// subtype compact_boundary; one response spans several lines with the
// same message id, not always next to each other.

// maxFolder is where the CLI cuts a long folder name and appends a hash.
const maxFolder = 200

// ProjectFolder is the folder name the CLI gives a working directory: every
// UTF-16 code unit that is not an ASCII letter or digit becomes "-", and a
// name longer than 200 is cut there and followed by "-" and the path's
// 32-bit string hash in base 36 (the CLI's JavaScript, read from its
// 2.1.197 and 2.1.332 binaries and checked against folders they made).
func ProjectFolder(path string) string {
	units := utf16.Encode([]rune(path))
	b := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = h*31 + int32(u) // (h<<5)-h+c, wrapping like JavaScript's |0
		c := byte('-')
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			c = byte(u)
		}
		b[i] = c
	}
	if len(b) <= maxFolder {
		return string(b)
	}
	return string(b[:maxFolder]) + "-" + strconv.FormatInt(int64(math.Abs(float64(h))), 36)
}

// ProjectDir is where the CLI keeps the transcripts of sessions run in
// dir: configDir (claudeconf.Dirs.Config: $CLAUDE_CONFIG_DIR or
// ~/.claude) / projects / ProjectFolder of dir with its symlinks resolved.
func ProjectDir(configDir, dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(configDir, "projects", ProjectFolder(dir))
}

// Transcripts reads the Claude Code transcripts in dir (a project
// folder), one stream each, in the order they started. Sessions whose id
// is in skip (debussy's own, read from its runs) are left out.
func Transcripts(dir string, skip map[string]bool) Result {
	var res Result
	entries, err := os.ReadDir(dir)
	if err != nil {
		res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", dir, err))
		return res
	}
	own, empty := 0, 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		id := strings.TrimSuffix(name, ".jsonl")
		if skip[id] {
			own++
			continue
		}
		path := filepath.Join(dir, name)
		st, bad, err := readTranscript(path)
		if err != nil {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if bad > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %d unreadable lines skipped", path, bad))
		}
		// Subagents' own files: their spend, never the main context.
		subs, _ := filepath.Glob(filepath.Join(dir, id, "subagents", "*.jsonl"))
		for _, sub := range subs {
			side, bad, err := readSubagent(sub)
			if err != nil {
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", sub, err))
				continue
			}
			if bad > 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: %d unreadable lines skipped", sub, bad))
			}
			st.Sessions[0].Side = st.Sessions[0].Side.Add(side)
		}
		if len(st.Sessions[0].Turns) == 0 {
			empty++
			continue
		}
		res.Streams = append(res.Streams, st)
	}
	if own > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d transcripts in %s are debussy's own sessions: read from its runs instead", own, dir))
	}
	if empty > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d transcripts in %s have no API response", empty, dir))
	}
	slices.SortStableFunc(res.Streams, func(a, b Stream) int {
		return cmp.Or(a.Started.Compare(b.Started), strings.Compare(a.Path, b.Path))
	})
	return res
}

// transcriptHead is what a transcript line says beside the message
// runner.Parse reads: a transcript marks a subagent's lines with
// isSidechain where a stream names the parent tool_use.
type transcriptHead struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	Version     string `json:"version"`
	Timestamp   string `json:"timestamp"`
	Params      struct {
		Betas []string `json:"betas"`
	} `json:"params"`
}

// transcriptEvent reads one transcript line: its head, and the message as
// the runner reads a stream's, a side chain's marked as a subagent's.
func transcriptEvent(line []byte) (transcriptHead, runner.Event, bool) {
	var h transcriptHead
	if json.Unmarshal(line, &h) != nil {
		return h, runner.Event{}, false
	}
	ev, err := runner.Parse(line)
	if err != nil {
		return h, ev, false
	}
	if h.IsSidechain {
		if ev.Assistant != nil && ev.Assistant.MainThread() {
			ev.Assistant.ParentToolUseID = sidechain
		}
		for i := range ev.ToolResults {
			ev.ToolResults[i].ParentToolUseID = cmp.Or(ev.ToolResults[i].ParentToolUseID, sidechain)
		}
		ev.System = nil // a subagent's compaction is not the session's
	}
	return h, ev, true
}

// sidechain stands for the parent of a transcript's side-chain lines.
const sidechain = "sidechain"

func readTranscript(path string) (Stream, int, error) {
	st := Stream{Source: SourceClaude, Path: path}
	var tb turnBuilder
	long := false
	bad, err := eachLine(path, func(line []byte) bool {
		h, ev, ok := transcriptEvent(line)
		if !ok {
			return false
		}
		if st.Started.IsZero() && h.Timestamp != "" {
			st.Started, _ = time.Parse(time.RFC3339Nano, h.Timestamp)
		}
		st.Version = cmp.Or(h.Version, st.Version)
		if h.Type == "api-request" {
			for _, b := range h.Params.Betas {
				long = long || strings.HasPrefix(b, "context-1m")
			}
			return true
		}
		if a := ev.Assistant; a != nil && a.MainThread() && !strings.HasPrefix(a.Model, "<") {
			st.Model = cmp.Or(st.Model, a.Model)
		}
		tb.observe(ev)
		return true
	})
	if err != nil {
		return st, bad, err
	}
	st.Sessions = []Session{{N: 1, Turns: tb.finish(), Side: tb.side, TriggerTurn: -1}}
	switch {
	case long:
		st.Window, st.WindowFrom = estimator.LongWindow, "model"
	default:
		st.Window, st.WindowFrom = guessWindow(st.Model, st.Sessions)
	}
	return st, bad, nil
}

// readSubagent is what one subagent's transcript spent.
func readSubagent(path string) (budget.Tokens, int, error) {
	var tb turnBuilder
	bad, err := eachLine(path, func(line []byte) bool {
		_, ev, ok := transcriptEvent(line)
		if ok && ev.Assistant != nil {
			ev.Assistant.ParentToolUseID = sidechain // all of it is the subagent's
			tb.observe(ev)
		}
		return ok
	})
	return tb.side, bad, err
}

// eachLine calls fn with every non-empty line of path; bad counts the
// lines fn could not read.
func eachLine(path string, fn func([]byte) bool) (bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rd := bufio.NewReaderSize(f, 64<<10)
	for {
		line, rerr := rd.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 && !fn(line) {
			bad++
		}
		if errors.Is(rerr, io.EOF) {
			return bad, nil
		}
		if rerr != nil {
			return bad, rerr
		}
	}
}
