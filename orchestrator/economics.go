package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
)

// ErrBudgetExhausted ends a run whose phase or plan budget ran out under
// strict enforcement (or adaptive at 100 % without a restart): the work is
// committed, later phases are not started. The phase is recorded failed
// with economics.exhausted set, so a rerun resumes it like any failure.
var ErrBudgetExhausted = errors.New("budget exhausted")

// ExtendRequest is a budget that ran out, put to the user (Options.Extend).
type ExtendRequest struct {
	Phase, Title string
	Scope        string // whose budget: "phase" or "plan"
	Spent        string // what was spent of which dimension: "tokens 101.2K of 100K"
	By           string // what an extension adds, the configured budget: "tokens 100K"
	N, Max       int    // this would be extension N of at most Max of this budget
}

// extendBudget asks the user (Options.Extend) whether to extend the budget
// that ran out, spent being its scope and spend ("phase tokens 101K of
// 100K"), and extends it when they say yes: by its configured amount, each
// limit it sets, recorded in the ledger and the events. It reports whether
// the phase may go on.
func (p *phaseRun) extendBudget(ctx context.Context, spent string) bool {
	r := p.r
	if r.Extend == nil || ctx.Err() != nil {
		return false
	}
	scope, what, _ := strings.Cut(spent, " ")
	ps := p.spendOf()
	x := ps.Extension(scope)
	goOn := func() bool {
		ps.Budget.Reset()
		p.recordSpend()
		return true
	}
	// The plan's budget is shared by parallel phases: another phase's
	// question may have raised it since this phase ran out, or while
	// this one was asked. One yes is one extension; the others go on.
	if !x.Spent(r.now()) {
		return goOn()
	}
	asked, by, count := x.Limits(), x.By(), x.Count()
	limit := r.cfg.Budget.MaxExtensions
	if count >= limit || by.None() {
		if limit > 0 {
			r.log.Info("budget not extended: max_extensions reached", "phase", p.ph.ID, "scope", scope, "max_extensions", limit)
		}
		return false
	}
	req := ExtendRequest{Phase: p.ph.ID, Title: p.ph.Title, Scope: scope, Spent: what, By: report.LimitText(spend.StateLimits(by)),
		N: count + 1, Max: limit}
	// A person answers; other phases go on meanwhile, and may ask too.
	yes := r.Extend(ctx, req) && ctx.Err() == nil
	// The grant is a compare-and-extend: of two yeses to the same
	// question, the second finds it extended already.
	granted := yes && x.GrantIf(asked)
	if !granted && x.Limits() != asked { // extended meanwhile by another phase's question
		r.log.Info("budget already extended while the user was asked", "phase", p.ph.ID, "scope", scope)
		if ctx.Err() != nil || x.Spent(r.now()) {
			return false
		}
		return goOn()
	}
	r.recorder.event(record.BudgetExtension{Phase: p.ph.ID, Scope: scope, Spent: what, By: req.By,
		Granted: yes, Extension: req.N, MaxExtensions: limit})
	if !granted {
		return false
	}
	goOn()
	r.log.Warn("budget extended by the user", "phase", p.ph.ID, "scope", scope, "by", req.By, "spent", what,
		"extension", req.N, "max_extensions", limit)
	_ = r.recorder.savePhase(p.rec) // the next session's start saves again
	return true
}

// extendedWhy is the checkpoint's reason after an extension.
func extendedWhy(spent string) string {
	scope, what, _ := strings.Cut(spent, " ")
	return fmt.Sprintf("the %s budget ran out (%s) and the user extended it. Go on with the remaining tasks by the most direct route; "+
		"record what is done with `debussy progress`", scope, what)
}

// exhaustedError is the run's last word when a budget ran out: which
// budget, what was spent, and how to raise it.
func (p *phaseRun) exhaustedError(spent string) error {
	r := p.r
	p.spendOf().Budget.Exhausted = spent
	if p.rec.Economics == nil {
		p.recordSpend()
	}
	p.rec.Economics.Exhausted = true
	if strings.HasPrefix(spent, policy.ScopePlan+" ") {
		// The phase's end saves the ledger again.
		_ = r.recorder.update(func(run *state.Run) {
			if run.Economics == nil {
				r.spend.RecordRun(run, r.now())
			}
			if run.Economics != nil {
				run.Economics.Exhausted = true
			}
		})
	}
	return public.OwnErr(fmt.Errorf("phase %s: %w: %s; work committed, later phases not started. %s",
		p.ph.ID, ErrBudgetExhausted, spent, raiseHint(spent)))
}

// raiseHint says how to raise the budget that ran out.
func raiseHint(spent string) string {
	scope, rest, _ := strings.Cut(spent, " ")
	dim, _, _ := strings.Cut(rest, " ")
	key, flag := "", ""
	switch dim {
	case "tokens":
		key, flag = "tokens", "--budget-tokens"
	case "cost":
		key, flag = "cost_usd", "--budget-cost"
	case "time":
		key = "duration"
	}
	cfgKey := fmt.Sprintf("budget.%s.%s", scope, key)
	switch {
	case scope == policy.ScopePhase && flag != "":
		return fmt.Sprintf("To go on, raise %s in .debussy.yaml (or pass %s, env %s) and run again: the phase resumes from a checkpoint.",
			cfgKey, flag, config.EnvVar(cfgKey))
	default:
		return fmt.Sprintf("To go on, raise %s in .debussy.yaml (env %s) and run again: the phase resumes from a checkpoint.",
			cfgKey, config.EnvVar(cfgKey))
	}
}
