//go:build !linux

package procgroup

import "errors"

// waitExited is not available here: the caller reaps first and signals the
// group after, accepting the small pid-reuse window.
func waitExited(int) error { return errors.ErrUnsupported }
