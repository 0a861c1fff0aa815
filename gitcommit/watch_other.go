//go:build !linux

package gitcommit

// userWatch is Linux's (watch_linux.go); elsewhere every look is whole.
type userWatch struct {
	watched map[string]bool
	last    map[string]fingerprintResult
	broken  bool
}

func newUserWatch(string, map[string][]string) *userWatch     { return nil }
func (w *userWatch) addAll(string, map[string][]string) bool  { return false }
func (w *userWatch) close()                                   {}
func (w *userWatch) changed([]string) (map[string]bool, bool) { return nil, false }
func (w *userWatch) looked(map[string]fingerprintResult)      {}
