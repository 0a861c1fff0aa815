package gitcommit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// getSub reads "section.subsection.key" with the subsection's case kept, as
// git compares it.
func (c gitConfig) getSub(section, sub, key string) (string, bool) {
	v, ok := c.values[strings.ToLower(section)+"."+sub+"."+strings.ToLower(key)]
	return v, ok
}

// crlfAction is git's decision for one path (convert.c's crlf_action).
type crlfAction uint8

const (
	crlfUndefined crlfAction = iota
	crlfBinary
	crlfText
	crlfTextInput
	crlfTextCRLF
	crlfAuto
	crlfAutoInput
	crlfAutoCRLF
)

func (a crlfAction) auto() bool { return a == crlfAuto || a == crlfAutoInput || a == crlfAutoCRLF }

// filterDriver is one filter.<name> section.
type filterDriver struct {
	name     string
	clean    string
	smudge   string
	process  string
	required bool
}

// converter turns worktree content into the blob `git add` stores
// (convert_to_git): the clean filter, working-tree-encoding (refused), CRLF
// to LF, then ident.
type converter struct {
	r        *Repo
	attrs    *attrs
	autocrlf string // "true", "input" or "false"
	eolCRLF  bool   // core.eol=crlf
	safeCRLF string // "true" (refuse), "warn" or "false"
	drivers  map[string]*filterDriver
	procs    map[string]*filterProcess // running long-running filters by command
	// deferEncoding: git's verdict will stage this commit, so a file with a
	// working-tree-encoding is left to git (errDeferToGit) instead of refused.
	deferEncoding bool
}

func (r *Repo) newConverter(cfg gitConfig) *converter {
	c := &converter{r: r, attrs: r.newAttrs(cfg), drivers: map[string]*filterDriver{}}
	switch v := strings.ToLower(strings.TrimSpace(cfg.get("core.autocrlf"))); {
	case v == "input":
		c.autocrlf = "input"
	case cfg.bool("core.autocrlf", false):
		c.autocrlf = "true"
	default:
		c.autocrlf = "false"
	}
	c.eolCRLF = strings.EqualFold(cfg.get("core.eol"), "crlf")
	switch v := strings.ToLower(strings.TrimSpace(cfg.get("core.safecrlf"))); {
	case !hasKey(cfg, "core.safecrlf"), v == "warn":
		c.safeCRLF = "warn"
	case cfg.bool("core.safecrlf", false):
		c.safeCRLF = "true"
	default:
		c.safeCRLF = "false"
	}
	for k, v := range cfg.values {
		rest, ok := strings.CutPrefix(k, "filter.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		name, key := rest[:i], rest[i+1:]
		d := c.drivers[name]
		if d == nil {
			d = &filterDriver{name: name}
			c.drivers[name] = d
		}
		switch key {
		case "clean":
			d.clean = v
		case "smudge":
			d.smudge = v
		case "process":
			d.process = v
		case "required":
			d.required = cfg.bool(k, false)
		}
	}
	return c
}

func hasKey(c gitConfig, key string) bool {
	_, ok := c.values[strings.ToLower(key)]
	return ok
}

// close stops the long-running filters started for this commit.
func (c *converter) close() {
	for _, p := range c.procs {
		p.stop()
	}
	c.procs = nil
}

// pathConv is what applies to one path.
type pathConv struct {
	action   crlfAction
	driver   *filterDriver
	ident    bool
	encoding string // working-tree-encoding other than UTF-8
	badEnc   bool   // working-tree-encoding set or unset without a value
}

func (c *converter) forPath(name string) (pathConv, error) {
	av, err := c.attrs.lookup(name)
	if err != nil {
		return pathConv{}, err
	}
	var pc pathConv
	pc.action = crlfFromAttr(av["text"])
	if pc.action == crlfUndefined {
		pc.action = crlfFromAttr(av["crlf"])
	}
	if pc.action != crlfBinary {
		if eol := av["eol"]; eol.kind == attrString {
			switch {
			case pc.action == crlfAuto && eol.value == "lf":
				pc.action = crlfAutoInput
			case pc.action == crlfAuto && eol.value == "crlf":
				pc.action = crlfAutoCRLF
			case eol.value == "lf":
				pc.action = crlfTextInput
			case eol.value == "crlf":
				pc.action = crlfTextCRLF
			}
		}
	}
	if pc.action == crlfText {
		if c.textEOLIsCRLF() {
			pc.action = crlfTextCRLF
		} else {
			pc.action = crlfTextInput
		}
	}
	if pc.action == crlfUndefined {
		switch c.autocrlf {
		case "true":
			pc.action = crlfAutoCRLF
		case "input":
			pc.action = crlfAutoInput
		default:
			pc.action = crlfBinary
		}
	}
	if f := av["filter"]; f.kind == attrString {
		pc.driver = c.drivers[f.value]
	}
	pc.ident = av["ident"].kind == attrSet
	switch enc := av["working-tree-encoding"]; enc.kind {
	case attrString:
		if enc.value != "" && !isUTF8Name(enc.value) {
			pc.encoding = enc.value
		}
	case attrSet, attrUnset:
		pc.badEnc = true
	}
	return pc, nil
}

func crlfFromAttr(v attrValue) crlfAction {
	switch v.kind {
	case attrSet:
		return crlfText
	case attrUnset:
		return crlfBinary
	case attrString:
		switch v.value {
		case "input":
			return crlfTextInput
		case "auto":
			return crlfAuto
		}
	}
	return crlfUndefined
}

func (c *converter) textEOLIsCRLF() bool {
	switch c.autocrlf {
	case "true":
		return true
	case "input":
		return false
	}
	return c.eolCRLF
}

func isUTF8Name(enc string) bool {
	return strings.EqualFold(enc, "utf-8") || strings.EqualFold(enc, "utf8")
}

// unsupportedState is the refusal for an attribute CommitAll cannot honour,
// or nil.
func (a *attrs) unsupportedState(st attrState, where string) error {
	if st.name == "working-tree-encoding" && !(st.val.kind == attrString && (st.val.value == "" || isUTF8Name(st.val.value))) && st.val.kind != attrUnspecified {
		return &UnsupportedError{
			Feature: "the working-tree-encoding attribute",
			Detail:  where,
			WayOut:  "remove it (keep such files in UTF-8) or commit them with git yourself before running debussy",
		}
	}
	return nil
}

// lookup is forPath with the common case first: with core.autocrlf false
// and no attribute on name, none is true and nothing converts, either way.
func (c *converter) lookup(name string) (pc pathConv, none bool, err error) {
	if c.autocrlf == "false" {
		if none, err := c.attrs.none(name); err != nil || none {
			return pathConv{}, none, err
		}
	}
	pc, err = c.forPath(name)
	return pc, false, err
}

// toGit returns the blob content `git add` stores for worktree file name.
// indexBlob is the blob the index holds for it now (stage 2 when unmerged;
// zero when untracked): git does not convert CRLF in a file whose index blob
// has CRLF already under text=auto or core.autocrlf. write is false when only
// hashing (`git status`), when git neither refuses for core.safecrlf.
func (c *converter) toGit(name string, content []byte, indexBlob plumbing.Hash, write bool) ([]byte, error) {
	pc, none, err := c.lookup(name)
	if err != nil || none {
		return content, err
	}
	if pc.driver != nil {
		out, err := c.clean(pc.driver, name, content)
		if err != nil {
			return nil, err
		}
		content = out
	}
	if pc.badEnc {
		return nil, fmt.Errorf("%s: true/false are no valid working-tree-encodings", name)
	}
	if pc.encoding != "" {
		if c.deferEncoding {
			return nil, errDeferToGit
		}
		return nil, &UnsupportedError{
			Feature: "the working-tree-encoding attribute",
			Detail:  name + " has working-tree-encoding=" + pc.encoding,
			WayOut:  "remove the attribute or commit the file with git yourself",
		}
	}
	content, err = c.crlfToGit(name, content, pc.action, indexBlob, write)
	if err != nil {
		return nil, err
	}
	if pc.ident {
		content = identToGit(content)
	}
	return content, nil
}

// outputCRLF is whether checkout would write CRLF for the action.
func (c *converter) outputCRLF(a crlfAction) bool {
	switch a {
	case crlfTextCRLF, crlfUndefined, crlfAutoCRLF:
		return true
	case crlfText, crlfAuto:
		return c.textEOLIsCRLF()
	}
	return false
}

func (c *converter) willConvertLFToCRLF(s textStat, a crlfAction) bool {
	if !c.outputCRLF(a) || s.loneLF == 0 {
		return false
	}
	if a.auto() && (s.loneCR > 0 || s.crlf > 0 || s.binary()) {
		return false
	}
	return true
}

func (c *converter) crlfToGit(name string, b []byte, a crlfAction, indexBlob plumbing.Hash, write bool) ([]byte, error) {
	if a == crlfBinary || len(b) == 0 {
		return b, nil
	}
	st := gatherStats(b)
	convert, err := c.crlfConvert(name, st, a, indexBlob, write)
	if err != nil || !convert {
		return b, err
	}
	// Under auto a lone CR made the file binary, so every CR is in a CRLF.
	out := make([]byte, 0, len(b)-st.crlf)
	for i, ch := range b {
		if ch == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			continue
		}
		out = append(out, ch)
	}
	return out, nil
}

// crlfConvert is crlfToGit's decision for content with stats st: whether
// its CRLFs become LF. It refuses under core.safecrlf=true as git does.
func (c *converter) crlfConvert(name string, st textStat, a crlfAction, indexBlob plumbing.Hash, write bool) (bool, error) {
	convert := st.crlf > 0
	if a.auto() {
		if st.binary() {
			return false, nil
		}
		if convert {
			has, err := c.hasCRLFInIndex(indexBlob)
			if err != nil {
				return false, fmt.Errorf("read index blob of %s: %w", name, err)
			}
			convert = !has
		}
	}
	if write && c.safeCRLF != "false" {
		after := st
		if convert {
			after.loneLF += after.crlf
			after.crlf = 0
		}
		if c.willConvertLFToCRLF(after, a) {
			after.crlf += after.loneLF
			after.loneLF = 0
		}
		var msg string
		switch {
		case st.crlf > 0 && after.crlf == 0:
			msg = "CRLF would be replaced by LF in " + name
		case st.loneLF > 0 && after.loneLF == 0:
			msg = "LF would be replaced by CRLF in " + name
		}
		if msg != "" {
			if c.safeCRLF == "true" {
				return false, fmt.Errorf("%s (core.safecrlf=true: git refuses this file too; fix its line endings or set core.safecrlf=warn)", msg)
			}
			c.r.log.Debug("line endings converted", "path", name, "detail", msg)
		}
	}
	return convert, nil
}

// hasCRLFInIndex is git's has_crlf_in_index: the blob is text with CRLF.
func (c *converter) hasCRLFInIndex(h plumbing.Hash) (bool, error) {
	if h.IsZero() || h == emptyBlob {
		return false, nil
	}
	obj, err := c.r.store.EncodedObject(plumbing.BlobObject, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return false, err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return false, err
	}
	if bytes.IndexByte(b, '\r') < 0 {
		return false, nil
	}
	st := gatherStats(b)
	return !st.binary() && st.crlf > 0, nil
}

// identToGit collapses "$Id: <anything> $" to "$Id$" (the ident attribute),
// leaving an "$Id:" whose closing '$' is on a later line alone.
func identToGit(b []byte) []byte {
	if !hasIdent(b) {
		return b
	}
	out := make([]byte, 0, len(b))
	for {
		d := bytes.IndexByte(b, '$')
		if d < 0 {
			break
		}
		out = append(out, b[:d+1]...)
		b = b[d+1:]
		if len(b) > 3 && bytes.HasPrefix(b, []byte("Id:")) {
			end := bytes.IndexByte(b[3:], '$')
			if end < 0 {
				break
			}
			if bytes.IndexByte(b[3:3+end], '\n') >= 0 {
				continue
			}
			out = append(out, "Id$"...)
			b = b[3+end+1:]
		}
	}
	return append(out, b...)
}

// hasIdent reports whether b holds "$Id$" or "$Id:...$" on one line.
func hasIdent(b []byte) bool {
	for {
		d := bytes.IndexByte(b, '$')
		if d < 0 || len(b)-d-1 < 3 {
			return false
		}
		b = b[d+1:]
		if !bytes.HasPrefix(b, []byte("Id")) {
			continue
		}
		switch b[2] {
		case '$':
			return true
		case ':':
			rest := b[3:]
			end := bytes.IndexAny(rest, "$\n")
			if end >= 0 && rest[end] == '$' {
				return true
			}
			if end < 0 {
				return false
			}
			b = rest[end+1:]
		}
	}
}

// oursBlob is the stage-2 ("ours") blob of an unmerged path, which git
// reads as the index content during a merge; zero if there is none.
func oursBlob(group []*index.Entry) plumbing.Hash {
	for _, e := range group {
		if e.Stage == index.OurMode {
			return e.Hash
		}
	}
	return plumbing.ZeroHash
}
