package gitcommit

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// HeadFile returns what HEAD's tree holds at path (slash-separated,
// relative to the root). ok is false when HEAD has no such file, or there
// is no commit yet.
func (r *Repo) HeadFile(path string) (data []byte, ok bool, err error) {
	end, err := r.begin()
	if err != nil {
		return nil, false, fmt.Errorf("read %s at HEAD: %w", path, err)
	}
	defer end()
	head, err := r.headHash()
	if err != nil || head.IsZero() {
		return nil, false, err
	}
	c, err := r.repo.CommitObject(head)
	if err != nil {
		return nil, false, fmt.Errorf("read %s at HEAD: %w", path, err)
	}
	f, err := c.File(path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s at HEAD: %w", path, err)
	}
	s, err := f.Contents()
	if err != nil {
		return nil, false, fmt.Errorf("read %s at HEAD: %w", path, err)
	}
	return []byte(s), true, nil
}
