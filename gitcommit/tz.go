package gitcommit

import (
	"encoding/binary"
	"strings"
	"time"
)

// posixZone is the zone git's libc uses for "now" and for a date without a
// zone when $TZ holds a POSIX rule ("EST5EDT,M3.2.0,M11.1.0", "<+03>-3"):
// Go reads a zone name in $TZ but falls back to UTC on a rule, so commits
// were stamped +0000 where git writes the real offset. The rule is read
// through Go's own TZif loader, as the footer of an otherwise empty zone
// file. nil when time.Local is right already.
func posixZone(getenv func(string) string) *time.Location {
	tz := getenv("TZ")
	if tz == "" || strings.HasPrefix(tz, ":") || strings.HasPrefix(tz, "/") {
		return nil
	}
	if _, err := time.LoadLocation(tz); err == nil {
		return nil
	}
	loc, err := time.LoadLocationFromTZData(tz, posixTZData(tz))
	if err != nil {
		return nil
	}
	return loc
}

// posixTZData is a TZif version 2 file with no transitions, one UTC type
// and rule as its footer: every instant is then resolved by the rule.
func posixTZData(rule string) []byte {
	header := func(b []byte) []byte {
		b = append(b, "TZif2"...)
		b = append(b, make([]byte, 15)...)
		// isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
		for _, n := range []uint32{0, 0, 0, 0, 1, 1} {
			b = binary.BigEndian.AppendUint32(b, n)
		}
		return b
	}
	data := func(b []byte) []byte {
		b = append(b, 0, 0, 0, 0, 0, 0) // utoff 0, isdst 0, desigidx 0
		return append(b, 0)             // the designation "": one NUL
	}
	b := data(header(nil))
	b = data(header(b))
	return append(append(append(b, '\n'), rule...), '\n')
}
