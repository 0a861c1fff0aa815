package runner

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// What the hand-written scanner got wrong: each case gives the right value
// or a clear error, never a wrong value.
func TestParseCorrectness(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantErr error
		check   func(t *testing.T, ev Event)
	}{
		{"escaped key", `{"typ\u0065":"result","sub\u0074ype":"success","num_turns":2}`, nil, func(t *testing.T, ev Event) {
			if ev.Kind != KindResult || ev.Subtype != "success" || ev.Result.NumTurns != 2 {
				t.Errorf("event = %+v %+v", ev, ev.Result)
			}
		}},
		{"escaped value", `{"type":"\u0072esult"}`, nil, func(t *testing.T, ev Event) {
			if ev.Kind != KindResult {
				t.Errorf("kind = %s", ev.Kind)
			}
		}},
		{"raw control character in a decoded string", "{\"type\":\"result\",\"result\":\"a\x01b\"}", ErrInvalidJSON, nil},
		{"raw newline in a skipped string", "{\"type\":\"result\",\"x\":\"a\nb\"}", ErrInvalidJSON, nil},
		{"raw tab in a key", "{\"ty\tpe\":\"result\"}", ErrInvalidJSON, nil},
		{"bad escape in a skipped string", `{"type":"result","x":"\q"}`, ErrInvalidJSON, nil},
		{"invalid UTF-8 in text", "{\"type\":\"result\",\"result\":\"a\xffb\xed\xa0\x80c\"}", nil, func(t *testing.T, ev Event) {
			if want := "a\uFFFDb\uFFFD\uFFFD\uFFFDc"; ev.Result.Text != want {
				t.Errorf("text = %q, want %q", ev.Result.Text, want)
			}
		}},
		{"invalid UTF-8 in an id", "{\"type\":\"assistant\",\"message\":{\"id\":\"m\xc3\"}}", nil, func(t *testing.T, ev Event) {
			if ev.Assistant.MessageID != "m\uFFFD" {
				t.Errorf("id = %q", ev.Assistant.MessageID)
			}
		}},
		{"invalid UTF-8 in a tool result", "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":\"\xfe\"}]}}", nil, func(t *testing.T, ev Event) {
			if tr := ev.ToolResults[0]; tr.Content != "\uFFFD" || tr.ContentLen != 3 {
				t.Errorf("tool result = %+v", tr)
			}
		}},
		{"float overflow", `{"type":"result","total_cost_usd":1e400}`, ErrOutOfRange, nil},
		{"int overflow as float", `{"type":"result","num_turns":1e400}`, ErrOutOfRange, nil},
		{"int overflow", `{"type":"result","duration_ms":9223372036854775808}`, ErrOutOfRange, nil},
		{"int overflow negative", `{"type":"system","subtype":"api_retry","attempt":-9.3e18}`, ErrOutOfRange, nil},
		{"int overflow in usage", `{"type":"assistant","message":{"usage":{"input_tokens":1e19}}}`, ErrOutOfRange, nil},
		{"int overflow in model usage", `{"type":"result","modelUsage":{"m":{"contextWindow":1e30}}}`, ErrOutOfRange, nil},
		{"int limits", `{"type":"result","duration_ms":9223372036854775807,"num_turns":-9223372036854775808}`, nil, func(t *testing.T, ev Event) {
			if r := ev.Result; r.DurationMs != math.MaxInt64 || r.NumTurns != math.MinInt64 {
				t.Errorf("result = %+v", r)
			}
		}},
		{"float underflow is zero", `{"type":"result","total_cost_usd":1e-400}`, nil, func(t *testing.T, ev Event) {
			if ev.Result.CostUSD != 0 {
				t.Errorf("cost = %v", ev.Result.CostUSD)
			}
		}},
		{"huge number in an unknown field", `{"type":"result","x":1e400,"y":[123456789012345678901234567890]}`, nil, func(t *testing.T, ev Event) {
			if ev.Kind != KindResult {
				t.Errorf("kind = %s", ev.Kind)
			}
		}},
		{"unknown fields and types", `{"type":"result","future":{"a":[1,{"b":null}]},"subtype":"success","new_field":true}`, nil, func(t *testing.T, ev Event) {
			if ev.Kind != KindResult || ev.Result.Subtype != "success" {
				t.Errorf("event = %+v", ev)
			}
		}},
		{"null line", `null`, ErrInvalidJSON, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse([]byte(tt.line))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range eventTexts(ev) {
				if !utf8.ValidString(s) {
					t.Errorf("invalid UTF-8 in %q", s)
				}
			}
			tt.check(t, ev)
		})
	}
}

// FuzzParse: Parse never panics, accepts exactly the objects encoding/json
// accepts (bar numbers too big for their field), and never lets invalid
// UTF-8 into decoded text.
func FuzzParse(f *testing.F) {
	for _, name := range streamFixtures {
		for _, line := range fixtureLines(f, name) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"a":[{"b":"\ud83d\ude00"},-0.5e+3,true,false,null]}`))
	f.Add([]byte(`{"typ\u0065":"result","result":"\xff\ud800","num_turns":1e400}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := Parse(line)
		if err != nil && !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrOutOfRange) {
			t.Fatalf("error wraps neither ErrInvalidJSON nor ErrOutOfRange: %v", err)
		}
		var v any
		_ = json.Unmarshal(line, &v) // v stays nil unless line is valid JSON
		_, isObject := v.(map[string]any)
		if isObject == errors.Is(err, ErrInvalidJSON) {
			t.Fatalf("encoding/json says object=%t, Parse says %v\n%q", isObject, err, line)
		}
		if err == nil {
			for _, s := range eventTexts(ev) {
				if !utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 in %q", s)
				}
			}
		}
	})
}

// eventTexts is every string an Event holds.
func eventTexts(ev Event) []string {
	var out []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			out = append(out, v.String())
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() != reflect.Uint8 { // Input is raw JSON
				for i := range v.Len() {
					walk(v.Index(i))
				}
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Key())
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(ev))
	return out
}

// FuzzText: the bounded string decoder agrees with encoding/json on every
// string literal: the same prefix and the same length.
func FuzzText(f *testing.F) {
	for _, s := range []string{`""`, `"a\"b\\c\/d\n\t\r\b\f"`, `"\u00e9\ud83d\ude00"`, `"\ud83dx\ude00\ud83d\u0041"`, "\"\xff\xed\xa0\x80é\"", `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		// encoding/json hands UnmarshalJSON the literal without spaces.
		if json.Unmarshal(raw, &want) != nil || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return
		}
		for _, limit := range []int{MaxTextBytes, 3, 1} {
			var b textBuf
			b.init(limit, len(raw))
			b.writeLiteral(raw)
			if b.n != len(want) || !strings.HasPrefix(want, string(b.b)) || len(b.b) > limit || len(want)-len(b.b) > 0 && len(b.b) < limit-3 {
				t.Fatalf("limit %d: decoded %q (%d), encoding/json %q (%d)", limit, b.b, b.n, want, len(want))
			}
		}
	})
}
