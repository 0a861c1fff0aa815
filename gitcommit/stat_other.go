//go:build !linux

package gitcommit

import "io/fs"

// sysStatKey adds nothing where the stat layout is not known here: size,
// mtime and mode decide.
func sysStatKey(fs.FileInfo) string { return "" }
