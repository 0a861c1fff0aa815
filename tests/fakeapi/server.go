package fakeapi

import (
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
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Request is one POST /v1/messages the server received.
type Request struct {
	Conversation string   `json:"conversation"`           // name of the bound conversation; "" when none matched and there is no Default
	Session      int      `json:"session"`                // index of the distinct session (see Sessions)
	Turn         int      `json:"turn"`                   // number of assistant messages in the request
	FirstUser    string   `json:"first_user"`             // the session's real prompt, <system-reminder> blocks stripped
	LastUser     string   `json:"last_user"`              // text of the last user message, reminders stripped
	ToolResults  []string `json:"tool_results,omitempty"` // hook context (below) cut out
	// HookContext is every PostToolUse additionalContext the last user
	// message carries. CLIs differ in where they put it: 2.1.197 sends a
	// separate text block, 2.1.330 appends it inside the tool_result's
	// content. Both land here; ToolResults keep no <system-reminder> block.
	HookContext []string  `json:"hook_context,omitempty"`
	Model       string    `json:"model"`
	Status      int       `json:"status"` // HTTP status answered; 0 for a hang
	Body        []byte    `json:"body,omitempty"`
	At          time.Time `json:"at"`
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
	dirs      []string // per session: its working directory, once seen
	binding   []int    // per session: conversation index, bindDefault or bindNone
	bound     []bool
	errCounts map[[2]int]int // (session, turn) → error answers so far
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
		writeStream(w, resp)
	} else {
		writeJSON(w, http.StatusOK, resp)
	}
}

// decide records the request and picks its answer, under the lock so that
// parallel requests bind sessions and count errors consistently.
func (s *Server) decide(wr *wireRequest, body []byte) plan {
	first, last, results, hookCtx, turn := "", "", []string(nil), []string(nil), 0
	firstSeen := false
	lastUser := -1
	for i, m := range wr.Messages {
		switch m.Role {
		case "assistant":
			turn++
		case "user":
			if !firstSeen {
				first, _, _ = userText(m.Content)
				firstSeen = true
			}
			lastUser = i
		}
	}
	if lastUser >= 0 {
		last, results, hookCtx = userText(wr.Messages[lastUser].Content)
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
	}
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
			Session: sess, Turn: turn, FirstUser: first, LastUser: last, ToolResults: results, HookContext: hookCtx,
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
	switch t := p.turn; {
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

// userText flattens a user message: its text blocks with the leading
// <system-reminder> blocks stripped, its tool_result contents, and the
// PostToolUse hook context found in either.
func userText(raw json.RawMessage) (text string, toolResults, hookCtx []string) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		rest, ctx := cutHookContext(str)
		return stripReminders(rest), nil, ctx
	}
	var blocks []wireBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", nil, nil
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			rest, ctx := cutHookContext(b.Text)
			hookCtx = append(hookCtx, ctx...)
			if t := stripReminders(rest); t != "" {
				parts = append(parts, t)
			}
		case "tool_result":
			rest, ctx := cutHookContext(flatten(b.Content))
			hookCtx = append(hookCtx, ctx...)
			// 2.1.330 appends its other reminders there too ("<total_tokens>
			// … tokens left"): the tool's own output is what is left.
			rest = reminderRE.ReplaceAllString(rest, "")
			toolResults = append(toolResults, strings.TrimRight(rest, "\n"))
		}
	}
	return strings.Join(parts, "\n"), toolResults, hookCtx
}

// hookContextRE is the reminder the CLI wraps a PostToolUse
// additionalContext in ("PostToolUse:Bash hook additional context: TEXT").
var hookContextRE = regexp.MustCompile(`(?s)<system-reminder>\s*PostToolUse:[^\n]*? hook additional context: (.*?)\s*</system-reminder>`)

var reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// cutHookContext returns s without its hook-context reminders, and their texts.
func cutHookContext(s string) (string, []string) {
	var ctx []string
	for _, m := range hookContextRE.FindAllStringSubmatch(s, -1) {
		ctx = append(ctx, m[1])
	}
	if ctx == nil {
		return s, nil
	}
	return hookContextRE.ReplaceAllString(s, ""), ctx
}

func flatten(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var blocks []wireBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func stripReminders(s string) string {
	const open, closing = "<system-reminder>", "</system-reminder>"
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, open) {
		end := strings.Index(s, closing)
		if end < 0 {
			return ""
		}
		s = strings.TrimSpace(s[end+len(closing):])
	}
	return s
}

// sessionDir is the session's working directory: from this request, else
// as an earlier request of the session said. 2.1.330 does not repeat it in
// every request's system prompt. s.mu is held.
func (s *Server) sessionDir(sess int, system json.RawMessage, body []byte) string {
	dir := workingDir(system)
	if dir == "" {
		dir = workingDir(body) // elsewhere in the request, e.g. a reminder
	}
	if dir == "" {
		return s.dirs[sess]
	}
	s.dirs[sess] = dir
	return dir
}

// workingDir finds the session's directory in the CLI's system prompt
// (" - Primary working directory: /path"), or in raw JSON text.
func workingDir(system json.RawMessage) string {
	const key = "Primary working directory: "
	text := string(system)
	var blocks []wireBlock
	if json.Unmarshal(system, &blocks) == nil {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString(bl.Text)
			b.WriteByte('\n')
		}
		text = b.String()
	} else {
		_ = json.Unmarshal(system, &text)
	}
	i := strings.Index(text, key)
	if i < 0 {
		return ""
	}
	rest := text[i+len(key):]
	if j := strings.IndexAny(rest, "\n\"\\"); j >= 0 { // a newline, or its JSON escape
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
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

// message is the Messages API response object.
type message struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []contentBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        Usage          `json:"usage"`
}

type contentBlock struct {
	Type  string         `json:"type"`
	Text  *string        `json:"text,omitempty"`
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// HandoffPath as a Write's file_path stands for the handoff path debussy
// last named in the conversation (its request carries the absolute path,
// which a script cannot know: it holds the run id).
const HandoffPath = "$HANDOFF"

var handoffPathRe = regexp.MustCompile(`/[^\s"'\x60\\]*/handoff-[0-9]+\.md`)

func lastHandoffPath(body []byte) string {
	all := handoffPathRe.FindAll(body, -1)
	if len(all) == 0 {
		return "handoff-not-named.md"
	}
	return string(all[len(all)-1])
}

func buildMessage(p plan, model string, blocks []Block) message {
	m := message{ID: p.msgID, Type: "message", Role: "assistant", Model: model, Usage: p.turn.Usage}
	stop := "end_turn"
	for i, b := range blocks {
		if b.Tool == "" {
			m.Content = append(m.Content, contentBlock{Type: "text", Text: &b.Text})
			continue
		}
		stop = "tool_use"
		input := make(map[string]any, len(b.Input))
		for k, v := range b.Input {
			input[k] = v
		}
		if fp, _ := input["file_path"].(string); fp == HandoffPath {
			input["file_path"] = lastHandoffPath(p.req.Body)
		}
		if fp, ok := input["file_path"].(string); ok && fp != "" && !filepath.IsAbs(fp) && p.cwd != "" {
			input["file_path"] = filepath.Join(p.cwd, fp)
		}
		m.Content = append(m.Content, contentBlock{
			Type:  "tool_use",
			ID:    fmt.Sprintf("toolu_%d_%d_%d", p.req.Session, p.req.Turn, i),
			Name:  b.Tool,
			Input: input,
		})
	}
	m.StopReason = &stop
	return m
}

// deltaChunk bounds one input_json_delta / text_delta, like the real API's
// incremental stream (and so a multi-MB Write is not one giant SSE event).
const deltaChunk = 64 << 10

func writeStream(w http.ResponseWriter, m message) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", "req_"+m.ID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}

	start := m
	start.Content = []contentBlock{}
	start.StopReason = nil
	startUsage := m.Usage
	startUsage.Output = min(startUsage.Output, 1) // the API reports output so far
	start.Usage = startUsage
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			empty := ""
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": contentBlock{Type: "text", Text: &empty}})
			for _, part := range chunks(*b.Text) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			input, _ := json.Marshal(b.Input)
			for _, part := range chunks(string(input)) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": *m.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": m.Usage.Output}})
	send("message_stop", map[string]any{"type": "message_stop"})
	if flusher != nil {
		flusher.Flush()
	}
}

// chunks splits s into pieces of at most deltaChunk bytes, on rune
// boundaries so each piece stays valid UTF-8 in its JSON event.
func chunks(s string) []string {
	if len(s) <= deltaChunk {
		return []string{s}
	}
	var out []string
	for len(s) > deltaChunk {
		cut := deltaChunk
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	// x-should-retry is left out on purpose: the CLI then applies its own
	// retry policy by status (retries 529/500, not 400), like against the API.
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}

func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func defaultErrorMessage(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "prompt is too long: 210000 tokens > 200000 maximum"
	case http.StatusTooManyRequests:
		return "Number of request tokens has exceeded your rate limit"
	case 529:
		return "Overloaded"
	default:
		return "Internal server error"
	}
}
