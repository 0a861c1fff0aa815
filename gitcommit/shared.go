package gitcommit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// core.sharedRepository, as git's git_config_perm reads it: 0 leaves modes
// to the umask, a positive value is permission bits added (group 0660,
// everybody 0664), a negative one the exact mode (-0640 for "0640").
func parseSharedPerm(v string, set, bare bool) int {
	const group, everybody = 0o660, 0o664
	switch {
	case !set:
		return 0
	case bare:
		return group
	}
	switch v {
	case "umask":
		return 0
	case "group":
		return group
	case "all", "world", "everybody":
		return everybody
	}
	i, err := strconv.ParseInt(v, 8, 32)
	if err != nil {
		switch strings.ToLower(v) {
		case "true", "yes", "on":
			return group
		}
		return 0
	}
	switch i {
	case 0:
		return 0
	case 1:
		return group
	case 2:
		return everybody
	}
	return -int(i & 0o666)
}

// adjustSharedPerm is git's adjust_shared_perm for a file or directory we
// just created.
func (r *Repo) adjustSharedPerm(path string) error {
	if r.shared == 0 {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	old := int(fi.Mode().Perm())
	tweak := r.shared
	if tweak < 0 {
		tweak = -tweak
	}
	if old&0o200 == 0 {
		tweak &^= 0o222
	}
	if old&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	mode := old | tweak
	if r.shared < 0 {
		mode = tweak
	}
	perm := fs.FileMode(mode)
	if fi.IsDir() {
		perm |= fs.FileMode(mode&0o444) >> 2
		perm |= fs.ModeSetgid
	}
	if perm == fi.Mode()&(fs.ModePerm|fs.ModeSetgid) {
		return nil
	}
	return os.Chmod(path, perm)
}

// objectDir makes sure the loose-object directory for h exists; one it
// creates gets core.sharedRepository's permissions, as git's do (go-git
// would create it 0755 whatever the setting).
func (r *Repo) objectDir(h plumbing.Hash) (string, error) {
	hex := h.String()
	dir := filepath.Join(r.objectsDir, hex[:2])
	if r.shared == 0 {
		return dir, os.MkdirAll(dir, 0o755)
	}
	err := os.Mkdir(dir, 0o777)
	if errors.Is(err, fs.ErrExist) {
		return dir, nil
	}
	if err != nil {
		return dir, err
	}
	return dir, r.adjustSharedPerm(dir)
}
