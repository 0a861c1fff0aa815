package runner

import (
	"bytes"
	"cmp"
	"fmt"
)

// Bounds on what an Event keeps from one line; the raw line is in the
// session log.
const (
	// MaxTextBytes bounds ToolResult.Content, Assistant.Text, Result.Text
	// and UserMessage.Text; the full decoded length is kept beside them.
	MaxTextBytes = 16 << 10
	// MaxInputBytes bounds the ToolUse.Input copy.
	MaxInputBytes = 64 << 10
)

// Parse turns one stdout line of `claude --output-format stream-json` into
// an Event. Only the fields consumers use are decoded; big strings are
// skipped without being materialised. Unknown line types give KindUnknown.
// A line that is not one complete JSON object gives an error wrapping
// ErrInvalidJSON: the caller logs it and moves on.
//
// The returned Event never aliases line, so the caller may reuse its buffer.
func Parse(line []byte) (Event, error) {
	ev := Event{Kind: KindUnknown, Size: len(line)}
	i := skipSpace(line, 0)
	if i >= len(line) {
		return ev, fmt.Errorf("parse line: %w: empty line", ErrInvalidJSON)
	}
	if line[i] != '{' {
		return ev, fmt.Errorf("parse line: %w: not an object", ErrInvalidJSON)
	}
	e := envelope{d: line}
	end, err := eachMember(line, i, e.member)
	if err != nil {
		return ev, fmt.Errorf("parse line: %w", err)
	}
	if end = skipSpace(line, end); end != len(line) {
		return ev, fmt.Errorf("parse line: %w", syntaxErr(end, "data after the object"))
	}
	if err := e.build(line, &ev); err != nil {
		return ev, fmt.Errorf("parse line: %w", err)
	}
	return ev, nil
}

// envelope collects every top-level field any line type uses; which ones
// matter is decided after the whole line is read, because JSON does not
// promise that "type" comes first.
type envelope struct {
	d   []byte // the line being parsed
	err error  // first error decoding a lazy string in build

	typ, subtype                      []byte
	sessionID, parentToolUseID, model lazy
	message                           message
	hasMessage                        bool
	resultFilePath                    lazy // tool_use_result.filePath
	interrupted                       bool // tool_use_result.interrupted
	errorText                         lazy

	// system/init
	cwd, permissionMode, version lazy
	tools                        span

	// other system lines
	status, compactResult, compactError lazy
	preTokens                           int64
	attempt, maxRetries, errorStatus    int64
	retryDelayMs                        float64
	taskID, toolUseID, description      lazy
	summary                             lazy // task_notification's description

	// control_response
	control ControlResponse

	// result
	isError                            bool
	terminalReason                     lazy
	apiErrorStatus, numTurns, duration int64
	costUSD                            float64
	resultText                         lazy
	usage                              Usage
	modelUsage                         map[string]ModelUsage
}

func (e *envelope) member(key []byte, i int) (int, error) {
	d := e.d
	var err error
	var end int
	switch string(key) {
	case "type":
		e.typ, end, _, err = rawString(d, i)
	case "subtype":
		e.subtype, end, _, err = rawString(d, i)
	case "session_id":
		e.sessionID, end, err = lazyString(d, i)
	case "parent_tool_use_id":
		e.parentToolUseID, end, err = lazyString(d, i)
	case "model":
		e.model, end, err = lazyString(d, i)
	case "message":
		e.hasMessage = true
		end, err = e.message.parse(d, i)
	case "tool_use_result":
		end, err = eachMember(d, i, func(key []byte, i int) (int, error) {
			switch string(key) {
			case "filePath":
				var end int
				var err error
				e.resultFilePath, end, err = lazyString(d, i)
				return end, err
			case "interrupted":
				var end int
				var err error
				e.interrupted, end, err = boolValue(d, i)
				return end, err
			}
			return skipValue(d, i)
		})
	case "error":
		e.errorText, end, err = lazyString(d, i)
	case "cwd":
		e.cwd, end, err = lazyString(d, i)
	case "permissionMode":
		e.permissionMode, end, err = lazyString(d, i)
	case "claude_code_version":
		e.version, end, err = lazyString(d, i)
	case "tools":
		end, err = skipValue(d, i)
		e.tools = span{i, end}
	case "status":
		e.status, end, err = lazyString(d, i)
	case "compact_result":
		e.compactResult, end, err = lazyString(d, i)
	case "compact_error":
		e.compactError, end, err = lazyString(d, i)
	case "compact_metadata":
		end, err = eachMember(d, i, func(key []byte, i int) (int, error) {
			if string(key) == "pre_tokens" {
				var end int
				var err error
				e.preTokens, end, err = intValue(d, i)
				return end, err
			}
			return skipValue(d, i)
		})
	case "attempt":
		e.attempt, end, err = intValue(d, i)
	case "max_retries":
		e.maxRetries, end, err = intValue(d, i)
	case "retry_delay_ms":
		e.retryDelayMs, end, err = floatValue(d, i)
	case "error_status":
		e.errorStatus, end, err = intValue(d, i)
	case "task_id":
		e.taskID, end, err = lazyString(d, i)
	case "tool_use_id":
		e.toolUseID, end, err = lazyString(d, i)
	case "description":
		e.description, end, err = lazyString(d, i)
	case "summary":
		e.summary, end, err = lazyString(d, i)
	case "response":
		end, err = e.parseControl(d, i)
	case "is_error":
		e.isError, end, err = boolValue(d, i)
	case "terminal_reason":
		e.terminalReason, end, err = lazyString(d, i)
	case "api_error_status":
		e.apiErrorStatus, end, err = intValue(d, i)
	case "num_turns":
		e.numTurns, end, err = intValue(d, i)
	case "duration_ms":
		e.duration, end, err = intValue(d, i)
	case "total_cost_usd":
		e.costUSD, end, err = floatValue(d, i)
	case "result":
		e.resultText, end, err = lazyString(d, i)
	case "usage":
		end, err = parseUsage(d, i, &e.usage)
	case "modelUsage":
		end, err = e.parseModelUsage(d, i)
	default:
		end, err = skipValue(d, i)
	}
	return end, err
}

func (e *envelope) parseControl(d []byte, i int) (int, error) {
	return eachMember(d, i, func(key []byte, i int) (int, error) {
		var end int
		var err error
		switch string(key) {
		case "subtype":
			e.control.Subtype, end, err = stringValue(d, i)
		case "request_id":
			e.control.RequestID, end, err = stringValue(d, i)
		case "error":
			e.control.Error, _, end, err = boundedString(d, i, MaxTextBytes)
		default:
			end, err = skipValue(d, i)
		}
		return end, err
	})
}

func parseUsage(d []byte, i int, u *Usage) (int, error) {
	return eachMember(d, i, func(key []byte, i int) (int, error) {
		var end int
		var err error
		switch string(key) {
		case "input_tokens":
			u.InputTokens, end, err = intValue(d, i)
		case "output_tokens":
			u.OutputTokens, end, err = intValue(d, i)
		case "cache_creation_input_tokens":
			u.CacheCreationInputTokens, end, err = intValue(d, i)
		case "cache_read_input_tokens":
			u.CacheReadInputTokens, end, err = intValue(d, i)
		default:
			end, err = skipValue(d, i)
		}
		return end, err
	})
}

func (e *envelope) parseModelUsage(d []byte, i int) (int, error) {
	return eachMember(d, i, func(key []byte, i int) (int, error) {
		if d[i] != '{' {
			return skipValue(d, i)
		}
		name, err := unquote(key, i)
		if err != nil {
			return 0, err
		}
		var mu ModelUsage
		end, err := eachMember(d, i, func(key []byte, i int) (int, error) {
			var end int
			var err error
			switch string(key) {
			case "inputTokens":
				mu.InputTokens, end, err = intValue(d, i)
			case "outputTokens":
				mu.OutputTokens, end, err = intValue(d, i)
			case "cacheReadInputTokens":
				mu.CacheReadInputTokens, end, err = intValue(d, i)
			case "cacheCreationInputTokens":
				mu.CacheCreationInputTokens, end, err = intValue(d, i)
			case "costUSD":
				mu.CostUSD, end, err = floatValue(d, i)
			case "contextWindow":
				mu.ContextWindow, end, err = intValue(d, i)
			default:
				end, err = skipValue(d, i)
			}
			return end, err
		})
		if err != nil {
			return 0, err
		}
		if e.modelUsage == nil {
			e.modelUsage = make(map[string]ModelUsage, 1)
		}
		e.modelUsage[name] = mu
		return end, nil
	})
}

// lazy is a string value found while scanning, decoded only if the line's
// type uses it: most lines carry session ids and models nobody reads.
type lazy struct {
	body []byte // undecoded, without quotes; nil for null or non-strings
	off  int
}

func lazyString(d []byte, i int) (lazy, int, error) {
	body, end, ok, err := rawString(d, i)
	if !ok {
		return lazy{}, end, err
	}
	return lazy{body: body, off: i}, end, err
}

func (e *envelope) str(l lazy) string {
	if len(l.body) == 0 {
		return ""
	}
	s, err := unquote(l.body, l.off)
	if err != nil && e.err == nil {
		e.err = err
	}
	return s
}

// bounded decodes at most MaxTextBytes of l.
func (e *envelope) bounded(l lazy) string {
	if len(l.body) == 0 {
		return ""
	}
	var t textBuf
	t.init(MaxTextBytes, len(l.body))
	if err := t.writeJSON(l.body, l.off); err != nil && e.err == nil {
		e.err = err
	}
	return string(t.b)
}

// strings decodes an array of strings (other elements are skipped) into
// substrings of one allocation: init lines list dozens of tool names.
func (e *envelope) strings(s span) []string {
	if s.end <= s.start || e.d[s.start] != '[' {
		return nil
	}
	var bodies []lazy
	total := 0
	_, err := eachElement(e.d[:s.end], s.start, func(i int) (int, error) {
		l, end, err := lazyString(e.d, i)
		if err == nil && l.body != nil {
			bodies = append(bodies, l)
			total += len(l.body)
		}
		return end, err
	})
	if err != nil && e.err == nil {
		e.err = err
	}
	var t textBuf
	t.init(total, total)
	ends := make([]int, len(bodies))
	for k, l := range bodies {
		if err := t.writeJSON(l.body, l.off); err != nil && e.err == nil {
			e.err = err
		}
		ends[k] = len(t.b)
	}
	all := string(t.b)
	out := make([]string, len(bodies))
	from := 0
	for k, to := range ends {
		out[k], from = all[from:to], to
	}
	return out
}

// message is the "message" object of assistant and user lines.
type message struct {
	id, model  string
	usage      Usage
	content    span // a string content (user prompt echo)
	hasContent bool
	blocks     []block
}

type span struct{ start, end int } // a JSON value's bytes: line[start:end]

// block is one element of message.content. Its "type" may come after the
// fields, so everything a block type could need is collected first.
type block struct {
	typ                 []byte
	id, name, toolUseID string
	isError             bool
	text                span // "text" (text blocks)
	content             span // "content" (tool_result: string or array)
	input               span // "input" (tool_use)
	command, filePath   string
}

func (m *message) parse(d []byte, i int) (int, error) {
	return eachMember(d, i, func(key []byte, i int) (int, error) {
		var end int
		var err error
		switch string(key) {
		case "id":
			m.id, end, err = stringValue(d, i)
		case "model":
			m.model, end, err = stringValue(d, i)
		case "usage":
			end, err = parseUsage(d, i, &m.usage)
		case "content":
			if d[i] == '"' {
				end, err = stringEnd(d, i)
				m.content, m.hasContent = span{i, end}, true
				break
			}
			end, err = eachElement(d, i, func(i int) (int, error) {
				var b block
				end, err := b.parse(d, i)
				if err == nil && d[i] == '{' {
					m.blocks = append(m.blocks, b)
				}
				return end, err
			})
		default:
			end, err = skipValue(d, i)
		}
		return end, err
	})
}

func (b *block) parse(d []byte, i int) (int, error) {
	return eachMember(d, i, func(key []byte, i int) (int, error) {
		var end int
		var err error
		switch string(key) {
		case "type":
			b.typ, end, _, err = rawString(d, i)
		case "id":
			b.id, end, err = stringValue(d, i)
		case "name":
			b.name, end, err = stringValue(d, i)
		case "tool_use_id":
			b.toolUseID, end, err = stringValue(d, i)
		case "is_error":
			b.isError, end, err = boolValue(d, i)
		case "text":
			end, err = skipValue(d, i)
			b.text = span{i, end}
		case "content":
			end, err = skipValue(d, i)
			b.content = span{i, end}
		case "input":
			end, err = eachMember(d, i, func(key []byte, i int) (int, error) {
				var end int
				var err error
				switch string(key) {
				case "command":
					b.command, end, err = stringValue(d, i)
				case "file_path", "notebook_path":
					b.filePath, end, err = stringValue(d, i)
				default:
					end, err = skipValue(d, i)
				}
				return end, err
			})
			b.input = span{i, end}
		default:
			end, err = skipValue(d, i)
		}
		return end, err
	})
}

// appendText decodes a string value, or the text blocks of an array value,
// into t. Arrays are joined with newlines; non-text elements are ignored.
func appendText(t *textBuf, d []byte, s span) error {
	if s.end <= s.start {
		return nil
	}
	v := d[:s.end]
	switch v[s.start] {
	case '"':
		return t.writeJSON(v[s.start+1:s.end-1], s.start)
	case '[':
		first := true
		_, err := eachElement(v, s.start, func(i int) (int, error) {
			var b block
			end, err := b.parse(v, i)
			if err != nil || string(b.typ) != "text" || b.text.end <= b.text.start || v[b.text.start] != '"' {
				return end, err
			}
			if !first {
				t.write([]byte("\n"))
			}
			first = false
			return end, t.writeJSON(v[b.text.start+1:b.text.end-1], b.text.start)
		})
		return err
	}
	return nil
}

func boundedText(d []byte, spans ...span) (string, int, error) {
	var t textBuf
	t.init(MaxTextBytes, 256)
	for k, s := range spans {
		if k > 0 && t.n > 0 && s.end > s.start {
			t.write([]byte("\n"))
		}
		if err := appendText(&t, d, s); err != nil {
			return "", 0, err
		}
	}
	return string(t.b), t.n, nil
}

// Known type and subtype values are interned so Parse does not allocate
// them per line.
func intern(b []byte) string {
	switch string(b) {
	case "system":
		return "system"
	case "assistant":
		return "assistant"
	case "user":
		return "user"
	case "result":
		return "result"
	case "control_response":
		return "control_response"
	case "init":
		return "init"
	case "success":
		return "success"
	case "status":
		return "status"
	case "api_retry":
		return "api_retry"
	case "compact_boundary":
		return "compact_boundary"
	case "error_during_execution":
		return "error_during_execution"
	case "error_max_turns":
		return "error_max_turns"
	}
	s, err := unquote(b, 0)
	if err != nil {
		return string(b)
	}
	return s
}

func (e *envelope) build(d []byte, ev *Event) error {
	ev.Type = intern(e.typ)
	ev.Subtype = intern(e.subtype)
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			ev.Kind = KindInit
			ev.Init = &Init{
				SessionID:      e.str(e.sessionID),
				Model:          e.str(e.model),
				Version:        e.str(e.version),
				Cwd:            e.str(e.cwd),
				PermissionMode: e.str(e.permissionMode),
				Tools:          e.strings(e.tools),
			}
			return e.err
		}
		ev.Kind = KindSystem
		ev.System = &System{
			Subtype:       ev.Subtype,
			Status:        e.str(e.status),
			CompactResult: e.str(e.compactResult),
			CompactError:  e.str(e.compactError),
			PreTokens:     e.preTokens,
			Attempt:       int(e.attempt),
			MaxRetries:    int(e.maxRetries),
			RetryDelayMs:  e.retryDelayMs,
			ErrorStatus:   int(e.errorStatus),
			Error:         e.bounded(e.errorText),
			TaskID:        e.str(e.taskID),
			ToolUseID:     e.str(e.toolUseID),
			Description:   cmp.Or(e.bounded(e.description), e.bounded(e.summary)),
		}
	case "assistant":
		ev.Kind = KindAssistant
		m := &e.message
		a := &Assistant{
			MessageID:       m.id,
			ParentToolUseID: e.str(e.parentToolUseID),
			Model:           m.model,
			Usage:           m.usage,
			Error:           e.bounded(e.errorText),
		}
		var texts []span
		for k := range m.blocks {
			b := &m.blocks[k]
			switch string(b.typ) {
			case "text":
				texts = append(texts, b.text)
			case "tool_use":
				tu := ToolUse{
					ID:        b.id,
					Name:      b.name,
					InputSize: b.input.end - b.input.start,
					Command:   b.command,
					FilePath:  b.filePath,
				}
				if tu.InputSize <= MaxInputBytes {
					tu.Input = bytes.Clone(d[b.input.start:b.input.end])
				}
				a.ToolUses = append(a.ToolUses, tu)
			}
		}
		if len(texts) > 0 {
			var err error
			if a.Text, _, err = boundedText(d, texts...); err != nil {
				return err
			}
		}
		ev.Assistant = a
	case "user":
		m := &e.message
		var texts []span
		for k := range m.blocks {
			b := &m.blocks[k]
			switch string(b.typ) {
			case "tool_result":
				content, n, err := boundedText(d, b.content)
				if err != nil {
					return err
				}
				ev.ToolResults = append(ev.ToolResults, ToolResult{
					ToolUseID:       b.toolUseID,
					ParentToolUseID: e.str(e.parentToolUseID),
					IsError:         b.isError,
					Content:         content,
					ContentLen:      n,
					// The CLI writes one tool_result per line, so the line's
					// structured result belongs to it.
					FilePath:    e.str(e.resultFilePath),
					Interrupted: e.interrupted,
				})
			case "text":
				texts = append(texts, b.text)
			}
		}
		if len(ev.ToolResults) > 0 {
			ev.Kind = KindToolResult
			return e.err
		}
		if m.hasContent {
			texts = append(texts, m.content)
		}
		text, _, err := boundedText(d, texts...)
		if err != nil {
			return err
		}
		ev.Kind = KindUser
		ev.User = &UserMessage{ParentToolUseID: e.str(e.parentToolUseID), Text: text}
	case "control_response":
		ev.Kind = KindControlResponse
		c := e.control
		ev.Control = &c
	case "result":
		ev.Kind = KindResult
		ev.Result = &Result{
			Subtype:        ev.Subtype,
			IsError:        e.isError,
			TerminalReason: e.str(e.terminalReason),
			APIErrorStatus: int(e.apiErrorStatus),
			NumTurns:       int(e.numTurns),
			DurationMs:     e.duration,
			CostUSD:        e.costUSD,
			SessionID:      e.str(e.sessionID),
			Text:           e.bounded(e.resultText),
			Usage:          e.usage,
			ModelUsage:     e.modelUsage,
		}
	}
	return e.err
}
