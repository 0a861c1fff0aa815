package orchestrator

import (
	"os"
	"path/filepath"

	"github.com/debussy-dev/debussy/checkpoint"
)

// setHandoff puts the agent's handoff (or why there is none) and the calls
// to avoid into the checkpoint's input; files the handoff names are looked
// up in the work tree at root.
func setHandoff(in *checkpoint.Input, handoff, path, noHandoff string, avoid []string, root string) {
	in.Handoff, in.HandoffPath, in.Avoid = handoff, path, avoid
	if handoff == "" {
		in.NoHandoff = noHandoff
	}
	in.Exists = func(p string) bool {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		_, err := os.Stat(p)
		return err == nil
	}
}
