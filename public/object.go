package public

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Object is a JSON object (an events.jsonl line) as it may leave the
// machine: Value for each key, objects and arrays under a structural key
// walked the same way.
func Object(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonValue(k, v)
	}
	return out
}

func jsonValue(key string, v any) any {
	if !Keys[key] {
		return numbersOnly(v)
	}
	switch x := v.(type) {
	case map[string]any:
		return Object(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(key, e)
		}
		return out
	case json.Number:
		return x
	}
	return Value(key, v)
}

// numbersOnly is v under a key that is not structure: its numbers and
// booleans (a spend's tokens by kind), every text withheld, whatever key
// it sits under inside.
func numbersOnly(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = numbersOnly(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbersOnly(e)
		}
		return out
	case string:
		if x == "" {
			return x
		}
		return Withheld(len(x))
	}
	return v // json.Number, bool, nil
}

// JSONLine is one JSON object line as it may leave the machine, its keys
// sorted with "ts" and "event" first as events.jsonl writes them; a line
// that is not an object is withheld whole.
func JSONLine(line []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		b, _ := json.Marshal(map[string]any{"event": "unreadable", "size": len(line)})
		return b
	}
	return ObjectLine(m)
}

// ObjectLine is JSONLine of an object already decoded (numbers as
// json.Number, so they keep their digits).
func ObjectLine(m map[string]any) []byte {
	m = Object(m)
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(k string) {
		v, ok := m[k]
		if !ok {
			return
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		delete(m, k)
	}
	put("ts")
	put("event")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		put(k)
	}
	b.WriteByte('}')
	return b.Bytes()
}
