package secrets

import (
	"bytes"
	"io"
	"reflect"
	"regexp"
)

// BlockWriter redacts what is written to it in units the caller chooses:
// Flush redacts everything written since the last flush as one text, so a
// private key block, a CSV export or a .netrc entry written line by line
// is judged whole. A unit that ends inside a private block (a BEGIN line
// without its END, a PuTTY Private-Lines: run) is held until the block
// ends or holdLimit bytes wait. Close flushes what is held.
type BlockWriter struct {
	w   io.Writer
	buf bytes.Buffer
}

// holdLimit bounds what an unterminated block holds back; past it the
// text is redacted as it is (a block cut short is redacted to its end).
const holdLimit = 256 << 10

// NewBlockWriter returns a BlockWriter writing to w.
func NewBlockWriter(w io.Writer) *BlockWriter { return &BlockWriter{w: w} }

func (b *BlockWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }

var (
	blockBegin = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?i)Private-Lines:`)
	blockEnd   = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?i)Private-MAC:`)
)

// openBlock reports whether text ends inside a private block.
func openBlock(text []byte) bool {
	begins := blockBegin.FindAllIndex(text, -1)
	if len(begins) == 0 {
		return false
	}
	last := begins[len(begins)-1][1]
	return !blockEnd.Match(text[last:])
}

// Flush redacts and writes what was written since the last flush, unless
// it ends inside a private block.
func (b *BlockWriter) Flush() error {
	if b.buf.Len() == 0 || b.buf.Len() < holdLimit && openBlock(b.buf.Bytes()) {
		return nil
	}
	return b.Close()
}

// Close redacts and writes everything written and not yet written.
func (b *BlockWriter) Close() error {
	if b.buf.Len() == 0 {
		return nil
	}
	text := Default().String(b.buf.String())
	b.buf.Reset()
	_, err := io.WriteString(b.w, text)
	return err
}

// Value redacts, in place, every string v reaches: v is a pointer to a
// struct, slice or map (a report before it is rendered, so that each text
// is judged whole before HTML escaping can hide a shape). Unexported
// fields are left alone.
func (r *Redactor) Value(v any) {
	r.walk(reflect.ValueOf(v), map[uintptr]bool{})
}

func (r *Redactor) walk(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		r.walk(v.Elem(), seen)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.String && v.CanSet() {
			v.Set(reflect.ValueOf(r.String(e.String())).Convert(e.Type()))
			return
		}
		r.walk(e, seen)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				r.walk(v.Field(i), seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			r.walk(v.Index(i), seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			switch e.Kind() {
			case reflect.String:
				v.SetMapIndex(k, reflect.ValueOf(r.String(e.String())).Convert(e.Type()))
			case reflect.Pointer, reflect.Map, reflect.Slice:
				r.walk(e, seen)
			case reflect.Interface:
				if s, ok := e.Interface().(string); ok {
					v.SetMapIndex(k, reflect.ValueOf(r.String(s)))
				} else if !e.IsNil() {
					r.walk(e.Elem(), seen)
				}
			default:
				// A struct held by value in a map cannot be set in place.
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(r.String(v.String()))
		}
	}
}
