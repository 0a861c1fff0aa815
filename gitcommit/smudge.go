package gitcommit

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// The smudge direction: what a checkout writes for a blob, as git's
// convert_to_working_tree does — ident expansion, LF to CRLF, then the
// smudge or process filter (git-lfs). working-tree-encoding is refused.
// Phase worktrees and merges into the user's checkout go through it, so a
// file is on disk as `git worktree add` or `git merge` would leave it.

// maxAttrFile is the size above which git (2.40 on) ignores an attributes
// file.
const maxAttrFile = 100 << 20

// smudger converts the files of one checkout. close it when done: it may
// hold long-running filters.
type smudger struct {
	conv     *converter
	symlinks bool // core.symlinks: false writes a link's target as a file
}

// newSmudger reads attributes for a checkout of to as git's checkout does
// (GIT_ATTR_CHECKOUT): a directory's .gitattributes from the tree being
// checked out, else from the worktree. onlyTree leaves the worktree out:
// there is none yet (a check before a new worktree is made).
func (r *Repo) newSmudger(cfg gitConfig, to map[string]treeFile, onlyTree bool) (*smudger, error) {
	s := &smudger{conv: r.newConverter(cfg), symlinks: cfg.bool("core.symlinks", true)}
	a := s.conv.attrs
	if onlyTree {
		for p := range to {
			for d := p; d != ""; {
				d, _ = splitDir(d)
				a.dirs[d] = nil
			}
		}
	}
	for p, f := range to {
		dir, base := splitDir(p)
		if base != ".gitattributes" || f.mode == filemode.Submodule {
			continue
		}
		b, small, err := r.readBlob(f.hash, maxAttrFile)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if small {
			a.dirs[dir] = parseAttrFile(b, p, dir, dir == "")
		}
	}
	return s, nil
}

func (s *smudger) close() { s.conv.close() }

// check refuses, before a file is written, what a checkout of paths cannot
// do as git would. start also starts the long-running filters they need, so
// one that fails or offers no smudge refuses the checkout before it begins.
func (s *smudger) check(to map[string]treeFile, paths []string, start bool) error {
	for _, p := range paths {
		if m := to[p].mode; m != filemode.Regular && m != filemode.Executable && m != filemode.Deprecated {
			continue
		}
		pc, err := s.conv.forPath(p)
		if err != nil {
			return err
		}
		if pc.badEnc {
			return fmt.Errorf("%s: true/false are no valid working-tree-encodings (git refuses it too); give the attribute a value or remove it", p)
		}
		if pc.encoding != "" {
			return &UnsupportedError{
				Feature: "the working-tree-encoding attribute",
				Detail:  p + " has working-tree-encoding=" + pc.encoding,
				WayOut:  "remove the attribute (keep such files in UTF-8) or run without --parallel",
			}
		}
		d := pc.driver
		if d == nil || !d.required {
			continue
		}
		if d.process == "" && d.smudge == "" {
			return fmt.Errorf("%s: smudge filter '%s' cannot run: filter.%s.required is set but neither filter.%s.smudge nor filter.%s.process is (git fails this checkout too); configure one or unset required",
				p, d.name, d.name, d.name, d.name)
		}
		if d.process != "" && start {
			proc, err := s.conv.process(d)
			if err != nil {
				return fmt.Errorf("%s: smudge filter '%s' cannot run (filter.%s.required; git fails this checkout too): %w; install it or fix filter.%s.process", p, d.name, d.name, err, d.name)
			}
			if !proc.caps["smudge"] {
				return fmt.Errorf("%s: smudge filter '%s' cannot run (filter.%s.required; git fails this checkout too): %q does not offer the smudge capability", p, d.name, d.name, d.process)
			}
		}
	}
	return nil
}

// smudge returns what a checkout writes for the blob rd of file name: rd
// itself when nothing applies.
func (s *smudger) smudge(name string, hash plumbing.Hash, rd io.Reader) (io.Reader, error) {
	c := s.conv
	pc, none, err := c.lookup(name)
	if err != nil || none {
		return rd, err
	}
	if !pc.ident && pc.driver == nil && !c.outputCRLF(pc.action) {
		return rd, nil
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	if pc.ident {
		b = identToWorktree(b, hash)
	}
	b = c.crlfToWorktree(b, pc.action)
	if d := pc.driver; d != nil {
		if b, err = c.runDriver(d, "smudge", d.smudge, name, b); err != nil {
			return nil, err
		}
	}
	return bytes.NewReader(b), nil
}

// crlfToWorktree is git's crlf_to_worktree: every lone LF becomes CRLF
// where the action writes CRLF (text=auto only in a file without CR that
// is not binary).
func (c *converter) crlfToWorktree(b []byte, a crlfAction) []byte {
	if len(b) == 0 || !c.outputCRLF(a) {
		return b
	}
	st := gatherStats(b)
	if !c.willConvertLFToCRLF(st, a) {
		return b
	}
	out := make([]byte, 0, len(b)+st.loneLF)
	for i, ch := range b {
		if ch == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, ch)
	}
	return out
}

// identToWorktree is git's ident_to_worktree: "$Id$" and "$Id:…$" (on one
// line, with no space inside but at its ends) become "$Id: <blob> $".
func identToWorktree(b []byte, hash plumbing.Hash) []byte {
	if !hasIdent(b) {
		return b
	}
	out := make([]byte, 0, len(b)+48)
	for {
		d := bytes.IndexByte(b, '$')
		if d < 0 {
			break
		}
		out = append(out, b[:d+1]...)
		b = b[d+1:]
		if len(b) < 3 || !bytes.HasPrefix(b, []byte("Id")) {
			continue
		}
		switch b[2] {
		case '$':
			b = b[3:]
		case ':':
			end := bytes.IndexByte(b[3:], '$')
			if end < 0 {
				// An unterminated keyword: git stops looking.
				return append(out, b...)
			}
			end += 3
			if bytes.IndexByte(b[3:end], '\n') >= 0 {
				continue
			}
			// Another system's keyword ("$Id: file.c,v 1.2 $") is kept.
			if end > 4 {
				if sp := bytes.IndexByte(b[4:end], ' '); sp >= 0 && 4+sp < end-1 {
					continue
				}
			}
			b = b[end+1:]
		default:
			continue
		}
		out = append(out, "Id: "+hash.String()+" $"...)
	}
	return append(out, b...)
}
