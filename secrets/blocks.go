package secrets

import (
	"bytes"
	"io"
	"reflect"
)

// BlockWriter redacts what is written to it in units the caller chooses:
// Flush redacts everything written since the last flush as one text, so a
// private key block, a CSV export or a .netrc entry written line by line
// is judged whole. A unit that ends inside a private block (a BEGIN line
// without its END, a PuTTY Private-Lines: run) is held for the next unit;
// if that one does not go on with the block (base64 lines, its END), the
// held unit is redacted as a block cut short, to its own end only, so a
// tool result cut after three lines does not swallow what follows. Close
// writes what is held.
type BlockWriter struct {
	w    io.Writer
	buf  bytes.Buffer
	held []byte
}

// holdLimit bounds what an unterminated block holds back; past it the
// text is redacted as it is (a block cut short is redacted to its end).
const holdLimit = 256 << 10

// NewBlockWriter returns a BlockWriter writing to w. Over a Writer
// (debussy's terminal) it writes to the writer beneath and does what the
// Writer would have done to each unit (see write): a unit is not redacted
// a second time.
func NewBlockWriter(w io.Writer) *BlockWriter { return &BlockWriter{w: beneath(w)} }

func (b *BlockWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }

var (
	blockBegin = lazyRegexp(pemBegin + `|(?i)Private-Lines:`)
	blockEnd   = lazyRegexp(pemEnd + `|(?i)Private-MAC:`)
	// A block's next line, behind a transcript's indent or marker.
	blockLine = lazyRegexp(`^\s*(?:[^\sA-Za-z0-9+/=]{1,3}\s*)?(?:[A-Za-z0-9+/=]{16,}|=[A-Za-z0-9+/]{4})\s*$`)
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

// continues reports whether unit goes on with a block left open.
func continues(unit []byte) bool {
	first := bytes.TrimSpace(unit)
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return blockLine.Match(first) || blockEnd.Match(first)
}

// Flush redacts and writes what was written since the last flush, unless
// it ends inside a private block.
func (b *BlockWriter) Flush() error {
	if b.buf.Len() == 0 {
		return nil
	}
	if len(b.held) > 0 && !continues(b.buf.Bytes()) {
		if err := b.write(b.held); err != nil {
			return err
		}
		b.held = nil
	}
	unit := append(b.held, b.buf.Bytes()...)
	b.buf.Reset()
	if len(unit) < holdLimit && openBlock(unit) {
		b.held = unit
		return nil
	}
	b.held = nil
	return b.write(unit)
}

// Close redacts and writes everything written and not yet written.
func (b *BlockWriter) Close() error {
	if err := b.Flush(); err != nil {
		return err
	}
	held := b.held
	b.held = nil
	return b.write(held)
}

// write redacts text as one text and, when it then reads as a JSON log
// line, as JSON too, which is what a Writer would have added.
func (b *BlockWriter) write(text []byte) error {
	if len(text) == 0 {
		return nil
	}
	red := []byte(Default().String(string(text)))
	if jsonLine(red) {
		red = Default().JSON(red)
	}
	_, err := b.w.Write(red)
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
		if c := r.redacted(v.Elem(), seen); v.CanSet() {
			v.Set(c)
		}
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
			v.SetMapIndex(k, r.redacted(v.MapIndex(k), seen))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(r.String(v.String()))
		}
	}
}

// redacted is a redacted copy of v, a value that cannot be set in place
// (a map's, an interface's): whatever it holds, a string, a struct or a
// pointer, is walked like any other value.
func (r *Redactor) redacted(v reflect.Value, seen map[uintptr]bool) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	r.walk(c, seen)
	return c
}
