package gitcommit

import (
	"strings"
	"unicode/utf8"
)

// isNTFSDotGit matches ".git" and "git~1" followed only by spaces and
// periods up to the end of the component (NTFS drops them) or up to a ':'
// (".git:x" and ".git::$INDEX_ALLOCATION" name streams of .git itself).
func isNTFSDotGit(name string) bool {
	var i int
	switch {
	case len(name) >= 4 && name[0] == '.' && strings.EqualFold(name[1:4], "git"):
		i = 4
	case len(name) >= 5 && strings.EqualFold(name[:3], "git") && name[3:5] == "~1":
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		if i == len(name) || name[i] == '/' || name[i] == '\\' || name[i] == ':' {
			return true
		}
		if name[i] != '.' && name[i] != ' ' {
			return false
		}
	}
}

// isNTFSDotGitmodules is git's is_ntfs_dot_generic for ".gitmodules",
// including its 8.3 short names ("gitmod~1", "gi7eba~1").
func isNTFSDotGitmodules(name string) bool { return isNTFSDotGeneric(name, "gitmodules", "gi7eba") }

// isNTFSDotGeneric is git's is_ntfs_dot_generic: ".<dotgit>" and its 8.3
// short names (the first six letters, or shortPrefix, then "~<digit>").
func isNTFSDotGeneric(name, dotgit, shortPrefix string) bool {
	onlySpacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			if i >= len(name) || name[i] == ':' {
				return true
			}
			if name[i] != ' ' && name[i] != '.' {
				return false
			}
		}
	}
	if len(name) > len(dotgit) && name[0] == '.' && strings.EqualFold(name[1:1+len(dotgit)], dotgit) {
		return onlySpacesAndPeriods(len(dotgit) + 1)
	}
	if len(name) >= 8 && strings.EqualFold(name[:6], dotgit[:6]) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' {
		return onlySpacesAndPeriods(8)
	}
	sawTilde := false
	for i := 0; i < 8; i++ {
		switch {
		case i >= len(name):
			return false
		case sawTilde:
			if name[i] < '0' || name[i] > '9' {
				return false
			}
		case name[i] == '~':
			i++
			if i >= len(name) || name[i] < '1' || name[i] > '9' {
				return false
			}
			sawTilde = true
		case i >= 6, name[i]&0x80 != 0:
			return false
		case wmToLower(name[i]) != shortPrefix[i]:
			return false
		}
	}
	return onlySpacesAndPeriods(8)
}

// isHFSDotGeneric is git's is_hfs_dot_generic: HFS+ ignores some Unicode
// code points, so ".g\u200cit" is ".git" there. Only checked with
// core.protectHFS (git's default on macOS).
func isHFSDotGeneric(path, needle string) bool {
	next := func() rune {
		for path != "" {
			r, n := utf8.DecodeRuneInString(path)
			path = path[n:]
			switch r {
			case 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
				0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff:
				continue
			}
			return r
		}
		return 0
	}
	if next() != '.' {
		return false
	}
	for i := 0; i < len(needle); i++ {
		c := next()
		if c > 127 || byte(wmToLower(byte(c))) != needle[i] {
			return false
		}
	}
	c := next()
	return c == 0 || c == '/'
}

// wmToLower is ASCII tolower.
func wmToLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
