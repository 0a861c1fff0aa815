package commands

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/remote"
)

// accountHold reads the usage limit in force that git records
// (remote.AccountHold): after a fetch of remoteName's debussy branches, or
// without the network when remoteName is "". A remote that cannot be
// reached is a warning on stderr: what is here still counts.
func (e *Env) accountHold(ctx context.Context, root, remoteName string) (remote.Hold, bool) {
	h, ok, err := remote.AccountHold(ctx, root, remoteName)
	if err != nil && remoteName != "" && !errors.Is(err, exec.ErrNotFound) {
		fmt.Fprintf(e.Stderr, "debussy: warning: %v; reading the usage limits recorded here only\n", err)
		h, ok, err = remote.AccountHold(ctx, root, "")
	}
	if err != nil {
		return remote.Hold{}, false
	}
	return h, ok
}

// holdAt is accountHold from remoteName when the repository has that
// remote, else from what is here.
func (e *Env) holdAt(ctx context.Context, root, remoteName string) (remote.Hold, bool) {
	if remoteName != "" && !hasRemote(ctx, root, remoteName) {
		remoteName = ""
	}
	return e.accountHold(ctx, root, remoteName)
}

// holdLine says, in plain words, what a hold means for the next session.
func holdLine(h remote.Hold, now time.Time) string {
	by := ""
	if h.Phase != "" {
		by = fmt.Sprintf(", met by phase %s", h.Phase)
	}
	return fmt.Sprintf("the account's %s usage limit%s (commit %s), resets %s (%s): debussy run starts no session before then",
		failure.LimitName(h.Limit), by, gitcommit.Short(h.Commit), failure.ResetClock(h.Resets, now), h.Resets.UTC().Format(time.RFC3339))
}

// hasRemote reports whether the repository at root has a remote named name.
func hasRemote(ctx context.Context, root, name string) bool {
	return remote.Remote{Dir: root, Name: name}.Check(ctx) == nil
}
