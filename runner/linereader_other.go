//go:build !unix

package runner

type mapping struct{ b []byte }

// newMapping: no anonymous mappings here; the reader grows a heap buffer.
func newMapping(int) *mapping { return nil }

func (m *mapping) free() {}
