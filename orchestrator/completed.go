package orchestrator

import (
	"fmt"
	"log/slog"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// Completed names the phases a run of opts (without --phase, --only or
// --restart) would skip as completed: in the plan's table, in an earlier
// run (.debussy/), or per the commit trailers in git, by package
// completion's precedence — what `check` and `status` show rather than the
// table's "pending". Nothing is locked or written.
func Completed(opts Options) (map[string]bool, error) {
	opts.PhaseID, opts.Only, opts.Restart = "", "", false
	r := &orun{Options: opts, cfg: opts.Config, log: slog.New(slog.DiscardHandler)}
	order, err := r.Plan.Order()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	r.ledger = &state.Ledger{}
	if r.Store != nil {
		if r.ledger, err = r.Store.Load(); err != nil {
			return nil, fmt.Errorf("read the ledger: %w", err)
		}
	}
	sel, err := r.selectPhases(order)
	if err != nil {
		return nil, err
	}
	return sel.skippedIDs(), nil
}
