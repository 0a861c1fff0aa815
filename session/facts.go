package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/debussy-dev/debussy/plans"
)

// Facts are the files on disk a session's decisions read: what the
// agent's own commands leave (`debussy done`, `debussy handoff`), its
// handoff, and its phase file's task list.
type Facts struct {
	SignalPath        string // `debussy done`'s signal of the phase
	HandoffSignalPath string // `debussy handoff`'s signal of the phase
	HandoffPath       string // where this session's handoff goes (absolute)
	PhaseFile         string // the phase's file, whose checked tasks adaptive budgets count
}

// watcher reads the facts. A hook's answer reads at most the stat of a
// signal or the handoff and a signal's few bytes, under .debussy/, which
// the agent's command just wrote; the phase file, which an adaptive
// quarter needs and which can be long, is re-read on its own goroutine
// after each tool result and the quarter takes the count as of then.
type watcher struct {
	Facts
	session int
	// done and handoff are read on the session's goroutine only.
	done, handoff signalFile

	mu             sync.Mutex
	checked, total int
	poke           chan struct{}
	stop           chan struct{}
}

func newWatcher(f Facts, session int, countTasks bool) *watcher {
	w := &watcher{Facts: f, session: session}
	if countTasks && f.PhaseFile != "" {
		w.poke, w.stop = make(chan struct{}, 1), make(chan struct{})
		w.readTasks()
		go w.follow()
	}
	return w
}

// signalled reports whether `debussy done` left a signal for this
// session (or one naming no session); an unreadable one counts (the phase
// loop reports it).
func (w *watcher) signalled() bool { return w.done.mine(w.SignalPath, w.session, true) }

// signalStatus is the status of the done signal signalled last read:
// completed, blocked or failed ("" when unknown).
func (w *watcher) signalStatus() string { return w.done.status }

// handedOff reports whether `debussy handoff` left a signal for this very
// session: an earlier session's names another handoff file.
func (w *watcher) handedOff() bool { return w.handoff.mine(w.HandoffSignalPath, w.session, false) }

// signalFile is what was last read of one signal file. The signals are
// facts whatever command line wrote them (chained, in a script, `bash
// -c`, an absolute path), so they are looked at after every tool: a stat,
// and a read of the few bytes only when the file changed since the last
// look.
type signalFile struct {
	seen   os.FileInfo // nil: not read, or gone
	ours   bool
	status string // what the signal says (completed, blocked, failed), "" unread
}

// mine reports whether the signal at path belongs to session. lenient
// (the done signal, which the phase loop clears before each attempt and
// reports when broken): a file that cannot be read or parsed counts, and
// so does one that names no session.
func (f *signalFile) mine(path string, session int, lenient bool) bool {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.seen = nil
		return false
	case err != nil:
		return lenient
	case f.seen != nil && os.SameFile(f.seen, fi) && fi.ModTime().Equal(f.seen.ModTime()) && fi.Size() == f.seen.Size():
		return f.ours // signals are replaced by a rename: a new one is a new file
	}
	data, err := os.ReadFile(path)
	var sig struct {
		Session int    `json:"session"`
		Status  string `json:"status"`
	}
	if err != nil || json.Unmarshal(data, &sig) != nil {
		f.seen, f.status = nil, ""
		return lenient
	}
	f.seen, f.status = fi, sig.Status
	f.ours = sig.Session == session || (sig.Session == 0 && lenient)
	return f.ours
}

// handoffSize is the handoff's size; 0 when it is missing.
func (w *watcher) handoffSize() int64 {
	fi, err := os.Stat(w.HandoffPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// tasks is the phase's checked and total tasks as last read.
func (w *watcher) tasks() (done, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checked, w.total
}

// changed asks for the task list to be read again (a tool ran).
func (w *watcher) changed() {
	if w.poke == nil {
		return
	}
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

func (w *watcher) follow() {
	for {
		select {
		case <-w.stop:
			return
		case <-w.poke:
			w.readTasks()
		}
	}
}

func (w *watcher) readTasks() {
	tasks, err := plans.ReadTasks(w.PhaseFile)
	if err != nil {
		return // the count stays as last read
	}
	done := 0
	for _, t := range tasks {
		if t.Done {
			done++
		}
	}
	w.mu.Lock()
	w.checked, w.total = done, len(tasks)
	w.mu.Unlock()
}

func (w *watcher) close() {
	if w.stop != nil {
		close(w.stop)
	}
}
