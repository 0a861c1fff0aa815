package commands

import (
	"encoding/json"
	"io"
)

// writeJSON writes v for people and their tools: indented unless oneLine,
// and with &, < and > as they are — `a && b` in a gate reads as typed, not
// as \u0026\u0026 (encoding/json escapes them for HTML by default).
func writeJSON(w io.Writer, v any, oneLine bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !oneLine {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// jsonEncoder is writeJSON's encoder, for a caller that encodes itself.
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc
}
