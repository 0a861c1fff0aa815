package fakeapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Request is one POST /v1/messages the server received.
type Request struct {
	Conversation string   `json:"conversation"`           // name of the bound conversation; "" when none matched and there is no Default
	Session      int      `json:"session"`                // index of the distinct session (see Sessions)
	Turn         int      `json:"turn"`                   // number of assistant messages in the request
	FirstUser    string   `json:"first_user"`             // the session's real prompt, <system-reminder> blocks stripped
	LastUser     string   `json:"last_user"`              // text of the last user message, reminders stripped
	ToolResults  []string `json:"tool_results,omitempty"` // hook context (below) cut out
	// HookContext is every PostToolUse additionalContext the request
	// added (see Added). CLIs differ in where they put it: 2.1.197 sends a
	// separate text block, 2.1.330 appends it inside the tool_result's
	// content. All land here; ToolResults keep no <system-reminder> block.
	HookContext []string `json:"hook_context,omitempty"`
	// Added is every text of the request (any message of any role, any
	// block or wrapper, tool results, the top-level system field) that the
	// session's previous request did not carry. Where the CLI puts a hook's
	// answer moves between releases (plain user text, a reminder, a system
	// message); it is in Added wherever it went. See Carries.
	Added  []string  `json:"added,omitempty"`
	Model  string    `json:"model"`
	Status int       `json:"status"` // HTTP status answered; 0 for a hang
	Body   []byte    `json:"body,omitempty"`
	At     time.Time `json:"at"`
}

// Other is a request to anything but POST /v1/messages (HEAD /, count_tokens, ...).
type Other struct {
	Method string
	Path   string
	Known  bool // answered sensibly rather than with 404
	At     time.Time
}

// Options configure StartWith.
type Options struct {
	Addr   string       // listen address; default 127.0.0.1:0
	Logger *slog.Logger // default: discard
}

// Server is a running fake API. Close it.
type Server struct {
	script Script
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	url    string

	done      chan struct{} // closed by Close: ends delays and hangs
	closeOnce sync.Once
	handlers  sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	sessions  []string
	dirs      []string   // per session: its working directory, once seen
	texts     [][]string // per session: the texts of its last request
	binding   []int      // per session: conversation index, bindDefault or bindNone
	bound     []bool
	errCounts map[[2]int]int  // (session, turn) → error answers so far
	limitsHit map[[2]int]bool // (session, turn) → its usage limit has begun
	limit     *activeLimit    // the latest usage limit; over once its reset has passed
	requests  []Request
	others    []Other
	seq       int
}

const (
	bindDefault = -1
	bindNone    = -2
)

// Start serves s on a free port of 127.0.0.1.
func Start(s Script) (*Server, error) { return StartWith(s, Options{}) }

// StartWith serves s with the given options.
func StartWith(s Script, o Options) (*Server, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	srv := &Server{
		script:    s,
		log:       o.Logger,
		ln:        ln,
		url:       "http://" + ln.Addr().String(),
		done:      make(chan struct{}),
		bound:     make([]bool, len(s.Conversations)),
		errCounts: map[[2]int]int{},
		limitsHit: map[[2]int]bool{},
	}
	srv.srv = &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			srv.log.Error("serve", "err", err)
		}
	}()
	return srv, nil
}

// URL is the base URL for ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.url }

// Close stops the server, ends every delay and hang, and waits for the
// handlers to return. Safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true // no handler starts after this, so Wait below is final
		s.mu.Unlock()
		close(s.done)
		_ = s.srv.Close()
	})
	s.handlers.Wait()
}

// Requests returns every /v1/messages request so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Sessions returns the distinct first user messages, in order of arrival.
func (s *Server) Sessions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sessions...)
}

// Others returns the requests to other endpoints, in order of arrival.
func (s *Server) Others() []Other {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Other(nil), s.others...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "api_error", "fakeapi: closed")
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.other(r, true)
		body, _ := io.ReadAll(r.Body)
		// Roughly four characters a token, like the CLI's own fallback.
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body) / 4})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.other(r, true)
		writeJSON(w, http.StatusOK, map[string]any{
			"data": []map[string]any{
				{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5"},
				{"type": "model", "id": "claude-opus-4-8", "display_name": "Claude Opus 4.8"},
			},
			"has_more": false,
		})
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && r.URL.Path == "/"):
		// The CLI probes HEAD / before its first request.
		s.other(r, true)
		w.WriteHeader(http.StatusOK)
	default:
		s.other(r, false)
		s.log.Warn("fakeapi: unknown request", "method", r.Method, "path", r.URL.RequestURI())
		writeError(w, http.StatusNotFound, "not_found_error", "fakeapi: no such endpoint "+r.URL.Path)
	}
}

func (s *Server) other(r *http.Request, known bool) {
	s.mu.Lock()
	s.others = append(s.others, Other{Method: r.Method, Path: r.URL.RequestURI(), Known: known, At: time.Now()})
	s.mu.Unlock()
}

// wireRequest is the part of a Messages request the fake reads.
type wireRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Content   json.RawMessage `json:"content"` // tool_result: string or blocks
	ToolUseID string          `json:"tool_use_id"`
}

// plan is what the server decided to answer one request.
type plan struct {
	req    Request
	turn   Turn
	msgID  string
	cwd    string
	hang   bool
	status int
	errMsg string
	limit  *activeLimit // a usage limit answers this request
}

// activeLimit is a usage limit in force until resets.
type activeLimit struct {
	typ    string
	resets time.Time
}

// covers reports whether the limit refuses a request for model: a limit on
// one model family (seven_day_opus) leaves the others alone, as the API
// does, so a fallback model can go on.
func (l *activeLimit) covers(model string) bool {
	_, family, ok := strings.Cut(l.typ, "_day_")
	return !ok || strings.Contains(strings.ToLower(model), family)
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "read body: "+err.Error())
		return
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		s.log.Warn("fakeapi: undecodable messages request", "err", err)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "decode body: "+err.Error())
		return
	}
	p := s.decide(&wr, body)
	s.log.Info("fakeapi: request", "conversation", p.req.Conversation, "session", p.req.Session,
		"turn", p.req.Turn, "status", p.req.Status, "hang", p.hang)

	if p.turn.Delay > 0 && !s.sleep(r.Context(), time.Duration(p.turn.Delay)) {
		return
	}
	if p.hang {
		select {
		case <-s.done:
		case <-r.Context().Done():
		}
		return
	}
	if p.limit != nil {
		writeUsageLimit(w, p.limit)
		return
	}
	if p.status != 0 {
		writeError(w, p.status, errorType(p.status), p.errMsg)
		return
	}
	if err := writeFiles(p.cwd, p.turn.Files); err != nil {
		s.log.Warn("fakeapi: turn files", "err", err)
		writeError(w, http.StatusInternalServerError, "api_error", "fakeapi: "+err.Error())
		return
	}
	blocks := p.turn.Blocks
	if len(blocks) == 0 {
		blocks = []Block{Text("done.")}
	}
	resp := buildMessage(p, wr.Model, blocks)
	if wr.Stream {
		var linger func()
		if d := time.Duration(p.turn.Linger); d > 0 {
			linger = func() { s.sleep(r.Context(), d) }
		}
		writeStream(w, resp, p.turn.Cut, linger)
	} else {
		writeJSON(w, http.StatusOK, resp)
	}
}

// decide records the request and picks its answer, under the lock so that
// parallel requests bind sessions and count errors consistently.
func (s *Server) decide(wr *wireRequest, body []byte) plan {
	first, last, results, turn := "", "", []string(nil), 0
	firstSeen := false
	lastUser := -1
	for i, m := range wr.Messages {
		switch m.Role {
		case "assistant":
			turn++
		case "user":
			if !firstSeen {
				first, _ = userText(m.Content)
				firstSeen = true
			}
			lastUser = i
		}
	}
	if lastUser >= 0 {
		last, results = userText(wr.Messages[lastUser].Content)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	sess := -1
	for i, f := range s.sessions {
		if f == first {
			sess = i
			break
		}
	}
	if sess < 0 {
		sess = len(s.sessions)
		s.sessions = append(s.sessions, first)
		s.binding = append(s.binding, s.bind(first))
		s.dirs = append(s.dirs, "")
		s.texts = append(s.texts, nil)
	}
	all := texts(wr)
	add := added(s.texts[sess], all)
	s.texts[sess] = all
	// Every PostToolUse context the request added, wherever it is; the
	// last user message's (cut out of its tool results) are among them.
	hookCtx := hookContexts(add)
	var conv *Conversation
	switch b := s.binding[sess]; b {
	case bindNone:
	case bindDefault:
		conv = s.script.Default
	default:
		conv = &s.script.Conversations[b]
	}

	s.seq++
	p := plan{
		msgID: fmt.Sprintf("msg_fake_%d_%d_%d", sess, turn, s.seq),
		cwd:   s.sessionDir(sess, wr.System, body),
		req: Request{
			Session: sess, Turn: turn, FirstUser: first, LastUser: last, ToolResults: results, HookContext: hookCtx, Added: add,
			Model: wr.Model, Body: body, At: time.Now(), Status: http.StatusOK,
		},
	}
	switch {
	case conv == nil:
		p.turn = Turn{Usage: Usage{Input: 100, Output: 5}, Blocks: []Block{Text("ok")}}
	case conv.React != nil && reacted(conv, p.req, &p.turn):
		p.req.Conversation = conv.Name
	case turn < len(conv.Turns):
		p.turn = conv.Turns[turn]
		p.req.Conversation = conv.Name
	default:
		p.req.Conversation = conv.Name
		if n := len(conv.Turns); n > 0 {
			p.turn.Usage = conv.Turns[n-1].Usage
		}
		p.turn.Blocks = []Block{Text("done.")}
	}
	now := time.Now()
	if t := p.turn; t.UsageLimit != nil && !s.limitsHit[[2]int{sess, turn}] {
		s.limitsHit[[2]int{sess, turn}] = true
		// The header carries whole seconds: the limit ends on the second it names.
		resets := now.Add(time.Duration(t.UsageLimit.For) + time.Second - 1).Truncate(time.Second)
		s.limit = &activeLimit{typ: cmp.Or(t.UsageLimit.Type, "five_hour"), resets: resets}
	}
	switch t := p.turn; {
	case s.limit != nil && now.Before(s.limit.resets) && s.limit.covers(wr.Model):
		p.limit, p.req.Status = s.limit, http.StatusTooManyRequests
	case t.Hang:
		p.hang, p.req.Status = true, 0
	case t.Status != 0:
		key := [2]int{sess, turn}
		if s.errCounts[key] < max(t.Repeat, 1) {
			s.errCounts[key]++
			p.status, p.req.Status = t.Status, t.Status
			p.errMsg = t.ErrorMessage
			if p.errMsg == "" {
				p.errMsg = defaultErrorMessage(t.Status)
			}
		}
	}
	s.requests = append(s.requests, p.req)
	return p
}

// bind picks the conversation for a new session; s.mu is held.
func (s *Server) bind(first string) int {
	for i, c := range s.script.Conversations {
		if !s.bound[i] && strings.Contains(first, c.Match) {
			s.bound[i] = true
			return i
		}
	}
	if s.script.Default != nil {
		return bindDefault
	}
	return bindNone
}

// reacted asks the conversation's React about r; p.mu is held.
func reacted(c *Conversation, r Request, t *Turn) bool {
	got, ok := c.React(r)
	if ok {
		*t = got
	}
	return ok
}

// writeFiles puts a turn's files in place, relative to the session's
// working directory, before the turn's tools can look at them.
func writeFiles(cwd string, files map[string]string) error {
	for rel, content := range files {
		if cwd == "" || filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
			return fmt.Errorf("turn file %q: want a relative path inside the working directory %q", rel, cwd)
		}
		path := filepath.Join(cwd, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write turn file: %w", err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write turn file: %w", err)
		}
	}
	return nil
}

func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	case <-ctx.Done():
		return false
	}
}
