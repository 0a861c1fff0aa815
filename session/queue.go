package session

import "sync"

// queue is an unbounded queue from the session's goroutine to its owner:
// the session must never wait on it, or a hook answer would wait with it
// (the owner may be committing, running the user's pre-commit hook).
type queue struct {
	mu     sync.Mutex
	items  []Effect
	closed bool
	ready  chan struct{} // holds one token while items or closed are new
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(e ...Effect) {
	q.mu.Lock()
	q.items = append(q.items, e...)
	q.mu.Unlock()
	q.signal()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns what is queued, and whether the session is over.
func (q *queue) take() ([]Effect, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out, q.closed
}
