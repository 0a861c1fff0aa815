package fakeapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// These tests speak HTTP to the server directly; fakeapi_test.go drives it
// with the real CLI.

type msg struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// reminder is what the CLI puts before the real prompt.
const reminder = "<system-reminder>\nAs you answer the user's questions...\n</system-reminder>\n\n"

func userMsg(prompt string) msg {
	return msg{Role: "user", Content: []map[string]any{
		{"type": "text", "text": reminder},
		{"type": "text", "text": prompt},
	}}
}

func assistantMsg() msg {
	return msg{Role: "assistant", Content: []map[string]any{{"type": "text", "text": "x"}}}
}

func toolResultMsg(content string) msg {
	return msg{Role: "user", Content: []map[string]any{
		{"type": "tool_result", "tool_use_id": "toolu_x", "content": content},
	}}
}

// conv builds the messages of a session's request at turn n.
func conv(prompt string, n int) []msg {
	ms := []msg{userMsg(prompt), {Role: "system", Content: "agent types..."}}
	for i := 0; i < n; i++ {
		ms = append(ms, assistantMsg(), toolResultMsg(fmt.Sprintf("result %d", i)))
	}
	return ms
}

type reply struct {
	status     int
	events     []string // SSE event names in order
	id         string
	text       string
	tools      []toolUse
	stop       string
	usage      fakeapi.Usage
	outTokens  int64
	errType    string
	errMessage string
}

type toolUse struct {
	ID, Name string
	Input    map[string]any
}

func post(t *testing.T, url string, messages []msg, system string) reply {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 100,
		"system":   []map[string]any{{"type": "text", "text": system}},
		"messages": messages,
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/v1/messages?beta=true", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Type != "error" {
			t.Fatalf("error body: %v %+v", err, e)
		}
		r.errType, r.errMessage = e.Error.Type, e.Error.Message
		return r
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	partial := map[int]*strings.Builder{}
	br := bufio.NewReader(resp.Body)
	var event string
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			r.events = append(r.events, event)
		case strings.HasPrefix(line, "data: "):
			var d struct {
				Type    string `json:"type"`
				Index   int    `json:"index"`
				Message struct {
					ID    string        `json:"id"`
					Usage fakeapi.Usage `json:"usage"`
				} `json:"message"`
				ContentBlock struct {
					Type string `json:"type"`
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"content_block"`
				Delta struct {
					Type        string `json:"type"`
					Text        string `json:"text"`
					PartialJSON string `json:"partial_json"`
					StopReason  string `json:"stop_reason"`
				} `json:"delta"`
				Usage struct {
					Output int64 `json:"output_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("event %s data: %v", event, err)
			}
			if d.Type != event {
				t.Fatalf("event %q carries type %q", event, d.Type)
			}
			switch d.Type {
			case "message_start":
				r.id, r.usage = d.Message.ID, d.Message.Usage
			case "content_block_start":
				if d.ContentBlock.Type == "tool_use" {
					r.tools = append(r.tools, toolUse{ID: d.ContentBlock.ID, Name: d.ContentBlock.Name})
					partial[d.Index] = &strings.Builder{}
				}
			case "content_block_delta":
				switch d.Delta.Type {
				case "text_delta":
					r.text += d.Delta.Text
				case "input_json_delta":
					partial[d.Index].WriteString(d.Delta.PartialJSON)
				}
			case "content_block_stop":
				if b, ok := partial[d.Index]; ok {
					tu := &r.tools[len(r.tools)-1]
					if err := json.Unmarshal([]byte(b.String()), &tu.Input); err != nil {
						t.Fatalf("tool input json: %v", err)
					}
				}
			case "message_delta":
				r.stop, r.outTokens = d.Delta.StopReason, d.Usage.Output
			}
		}
	}
	return r
}

func start(t *testing.T, s fakeapi.Script) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.Start(s)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestStreamShape(t *testing.T) {
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Name: "a", Match: "build it",
		Turns: []fakeapi.Turn{{
			Usage:  fakeapi.Usage{Input: 3000, CacheRead: 20000, CacheCreation: 500, Output: 40},
			Blocks: []fakeapi.Block{fakeapi.Text("I will."), fakeapi.Write("a.txt", "hello\n"), fakeapi.Bash("cat a.txt")},
		}},
	}}})
	r := post(t, srv.URL(), conv("build it", 0), "x\n - Primary working directory: /work/dir\n - Platform: linux")

	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if got := strings.Join(r.events, ","); got != strings.Join(want, ",") {
		t.Errorf("events:\n got %s\nwant %s", got, strings.Join(want, ","))
	}
	if r.usage.Input != 3000 || r.usage.CacheRead != 20000 || r.usage.CacheCreation != 500 {
		t.Errorf("message_start usage = %+v", r.usage)
	}
	if r.outTokens != 40 || r.stop != "tool_use" {
		t.Errorf("message_delta = %d %q, want 40 tool_use", r.outTokens, r.stop)
	}
	if r.text != "I will." || len(r.tools) != 2 {
		t.Fatalf("text %q tools %+v", r.text, r.tools)
	}
	if r.tools[0].Name != "Write" || r.tools[0].Input["file_path"] != "/work/dir/a.txt" {
		t.Errorf("Write = %+v, want the relative path resolved against the working directory", r.tools[0])
	}
	if r.tools[1].Name != "Bash" || r.tools[1].Input["command"] != "cat a.txt" {
		t.Errorf("Bash = %+v", r.tools[1])
	}
	if r.tools[0].ID == r.tools[1].ID {
		t.Errorf("tool ids not unique: %s", r.tools[0].ID)
	}
}

func TestBindingAndTurns(t *testing.T) {
	script := fakeapi.Script{
		Conversations: []fakeapi.Conversation{
			{Name: "p1-first", Match: "phase one", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Text("p1 s0 t0")}}}},
			{Name: "p2", Match: "phase two", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Text("p2 t0")}}}},
			{Name: "p1-restart", Match: "phase one", Turns: []fakeapi.Turn{
				{Blocks: []fakeapi.Block{fakeapi.Text("p1 s1 t0")}},
				{Usage: fakeapi.Usage{Input: 7}, Blocks: []fakeapi.Block{fakeapi.Text("p1 s1 t1")}},
			}},
		},
		Default: &fakeapi.Conversation{Name: "fallback", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Text("fallback")}}}},
	}
	srv := start(t, script)
	restart := "Checkpoint: you were doing phase one.\n\nphase one: do it"
	tests := []struct {
		name     string
		messages []msg
		wantText string
		wantReq  fakeapi.Request
	}{
		{"first session binds the first match", conv("phase one: do it", 0), "p1 s0 t0",
			fakeapi.Request{Conversation: "p1-first", Session: 0, Turn: 0, FirstUser: "phase one: do it"}},
		{"same session stays bound", conv("phase one: do it", 1), "done.",
			fakeapi.Request{Conversation: "p1-first", Session: 0, Turn: 1, FirstUser: "phase one: do it", LastUser: ""}},
		{"restart binds the next same-match conversation", conv(restart, 0), "p1 s1 t0",
			fakeapi.Request{Conversation: "p1-restart", Session: 1, Turn: 0, FirstUser: restart}},
		{"other phase", conv("phase two", 0), "p2 t0",
			fakeapi.Request{Conversation: "p2", Session: 2, Turn: 0, FirstUser: "phase two"}},
		{"restart turn 1", conv(restart, 1), "p1 s1 t1",
			fakeapi.Request{Conversation: "p1-restart", Session: 1, Turn: 1, FirstUser: restart}},
		{"third phase-one session falls to default", conv("phase one again", 0), "fallback",
			fakeapi.Request{Conversation: "fallback", Session: 3, Turn: 0, FirstUser: "phase one again"}},
		{"another unmatched session shares default", conv("hello", 0), "fallback",
			fakeapi.Request{Conversation: "fallback", Session: 4, Turn: 0, FirstUser: "hello"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, srv.URL(), tt.messages, "")
			if r.text != tt.wantText {
				t.Errorf("text = %q, want %q", r.text, tt.wantText)
			}
			got := srv.Requests()[i]
			if got.Conversation != tt.wantReq.Conversation || got.Session != tt.wantReq.Session ||
				got.Turn != tt.wantReq.Turn || got.FirstUser != tt.wantReq.FirstUser || got.Status != 200 {
				t.Errorf("request = %+v\nwant %+v", got, tt.wantReq)
			}
		})
	}
	if got := srv.Sessions(); len(got) != 5 || got[1] != restart {
		t.Errorf("sessions = %q", got)
	}
	if r := srv.Requests()[1]; len(r.ToolResults) != 1 || r.ToolResults[0] != "result 0" {
		t.Errorf("tool results = %q", r.ToolResults)
	}
}

func TestNoScriptAnswersOK(t *testing.T) {
	srv := start(t, fakeapi.Script{})
	r := post(t, srv.URL(), conv("anything", 0), "")
	if r.text != "ok" || r.stop != "end_turn" {
		t.Errorf("reply = %q %q", r.text, r.stop)
	}
	if c := srv.Requests()[0].Conversation; c != "" {
		t.Errorf("conversation = %q", c)
	}
}

func TestErrorsRepeatThenReply(t *testing.T) {
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "busy", Match: "busy", Turns: []fakeapi.Turn{
			{Status: 529, Repeat: 2, Blocks: []fakeapi.Block{fakeapi.Text("finally")}},
		}},
		{Name: "long", Match: "long", Turns: []fakeapi.Turn{{Status: 400}}},
		{Name: "custom", Match: "custom", Turns: []fakeapi.Turn{{Status: 500, ErrorMessage: "boom"}}},
	}})
	tests := []struct {
		prompt              string
		status              int
		errType, errMessage string
		text                string
	}{
		{"busy", 529, "overloaded_error", "Overloaded", ""},
		{"busy", 529, "overloaded_error", "Overloaded", ""},
		{"busy", 200, "", "", "finally"},
		{"long", 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", ""},
		{"long", 200, "", "", "done."},
		{"custom", 500, "api_error", "boom", ""},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d_%s", i, tt.prompt), func(t *testing.T) {
			r := post(t, srv.URL(), conv(tt.prompt, 0), "")
			if r.status != tt.status || r.errType != tt.errType || r.errMessage != tt.errMessage || r.text != tt.text {
				t.Errorf("got %d %q %q %q, want %d %q %q %q", r.status, r.errType, r.errMessage, r.text,
					tt.status, tt.errType, tt.errMessage, tt.text)
			}
			if got := srv.Requests()[i].Status; got != tt.status {
				t.Errorf("recorded status %d", got)
			}
		})
	}
}

func TestPastLastTurnKeepsUsage(t *testing.T) {
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{Match: "x", Turns: []fakeapi.Turn{
		{Usage: fakeapi.Usage{Input: 150000, Output: 9}, Blocks: []fakeapi.Block{fakeapi.Bash("true")}},
	}}}})
	r := post(t, srv.URL(), conv("x", 3), "")
	if r.text != "done." || r.stop != "end_turn" || r.usage.Input != 150000 {
		t.Errorf("reply = %q %q %+v", r.text, r.stop, r.usage)
	}
}

// Close must end delays and hangs (it waits for every handler), and a client
// stuck in them sees the connection end.
func TestCloseEndsDelayAndHang(t *testing.T) {
	srv, err := fakeapi.Start(fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Match: "hang", Turns: []fakeapi.Turn{{Hang: true}}},
		{Match: "slow", Turns: []fakeapi.Turn{{Delay: fakeapi.Duration(time.Hour)}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, p := range []string{"hang", "slow"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": conv(p, 0)})
			resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", bytes.NewReader(body))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	for len(srv.Requests()) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	srv.Close()
	wg.Wait()
	if got := srv.Requests(); got[0].Status+got[1].Status != 200 {
		t.Errorf("statuses: hang must record 0, delay 200: %+v", got)
	}
}

func TestDelayedReply(t *testing.T) {
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Match: "x", Turns: []fakeapi.Turn{{Delay: fakeapi.Duration(20 * time.Millisecond), Blocks: []fakeapi.Block{fakeapi.Text("late")}}}},
	}})
	if r := post(t, srv.URL(), conv("x", 0), ""); r.text != "late" {
		t.Errorf("text = %q", r.text)
	}
}

func TestLargeToolInputIsChunked(t *testing.T) {
	content := strings.Repeat("é0123456789abcdef", 20_000) // ~360 KB, multi-byte runes across chunk edges
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Match: "big", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Write("/tmp/big.txt", content)}}}},
	}})
	r := post(t, srv.URL(), conv("big", 0), "")
	deltas := 0
	for _, e := range r.events {
		if e == "content_block_delta" {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("one %d-byte input in %d deltas, want it chunked", len(content), deltas)
	}
	if len(r.tools) != 1 || r.tools[0].Input["content"] != content {
		t.Errorf("content did not survive the round trip")
	}
}

func TestOtherEndpoints(t *testing.T) {
	srv := start(t, fakeapi.Script{})
	tests := []struct {
		method, path string
		status       int
		known        bool
	}{
		{http.MethodHead, "/", 200, true},
		{http.MethodPost, "/v1/messages/count_tokens", 200, true},
		{http.MethodGet, "/v1/models", 200, true},
		{http.MethodGet, "/v1/nope", 404, false},
	}
	for i, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL()+tt.path, strings.NewReader(`{"messages":[]}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if o := srv.Others()[i]; o.Path != tt.path || o.Known != tt.known {
				t.Errorf("recorded %+v", o)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d messages requests recorded", n)
	}
}

func TestParallelRequests(t *testing.T) {
	var convs []fakeapi.Conversation
	for i := range 8 {
		convs = append(convs, fakeapi.Conversation{Name: fmt.Sprint(i), Match: "task", Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{fakeapi.Text(fmt.Sprint(i))}},
		}})
	}
	srv := start(t, fakeapi.Script{Conversations: convs})
	var wg sync.WaitGroup
	texts := make([]string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts[i] = post(t, srv.URL(), conv(fmt.Sprintf("task %d", i), 0), "").text
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, s := range texts {
		seen[s] = true
	}
	if len(seen) != 8 || len(srv.Sessions()) != 8 {
		t.Errorf("8 sessions must bind 8 distinct conversations: %q", texts)
	}
}

func TestParseScript(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr string
	}{
		{"full", `{"conversations":[{"name":"a","match":"m","turns":[
			{"usage":{"input_tokens":1,"cache_read_input_tokens":2,"cache_creation_input_tokens":3,"output_tokens":4},
			 "blocks":[{"text":"hi"},{"tool":"Bash","input":{"command":"ls"}}],"delay":"1.5s"},
			{"status":529,"repeat":3,"delay":0.25},{"hang":true}]}],
			"default":{"name":"d","turns":[]}}`, ""},
		{"unknown field", `{"conversations":[{"name":"a","turnz":[]}]}`, "unknown field"},
		{"both text and tool", `{"conversations":[{"turns":[{"blocks":[{"text":"x","tool":"Bash"}]}]}]}`, "both text and tool"},
		{"bad status", `{"conversations":[{"turns":[{"status":200}]}]}`, "not an HTTP error"},
		{"bad delay", `{"conversations":[{"turns":[{"delay":"soon"}]}]}`, "parse duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fakeapi.ParseScript([]byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			turns := s.Conversations[0].Turns
			if turns[0].Usage != (fakeapi.Usage{Input: 1, CacheRead: 2, CacheCreation: 3, Output: 4}) ||
				time.Duration(turns[0].Delay) != 1500*time.Millisecond ||
				time.Duration(turns[1].Delay) != 250*time.Millisecond || !turns[2].Hang || s.Default.Name != "d" {
				t.Errorf("parsed %+v", s)
			}
			// Round trip: what a test builds in Go can be saved for the demo.
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := fakeapi.ParseScript(b)
			if err != nil {
				t.Fatalf("round trip: %v\n%s", err, b)
			}
			if time.Duration(s2.Conversations[0].Turns[0].Delay) != 1500*time.Millisecond {
				t.Errorf("round trip lost the delay: %s", b)
			}
		})
	}
}

// A cut turn breaks the stream mid-block: the client reads the start, then
// an error instead of message_stop.
func TestCutBreaksStream(t *testing.T) {
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Name: "a", Match: "cut it",
		Turns: []fakeapi.Turn{{Cut: true, Blocks: []fakeapi.Block{fakeapi.Bash("echo one two three")}}},
	}}})
	body, err := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 100,
		"system":   []map[string]any{{"type": "text", "text": "x"}},
		"messages": conv("cut it", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("the stream ended cleanly; want it broken:\n%s", got)
	}
	if !strings.Contains(string(got), "content_block_delta") || strings.Contains(string(got), "message_stop") {
		t.Errorf("want the start and half a block, no message_stop:\n%s", got)
	}
}
