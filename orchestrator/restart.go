package orchestrator

// lessons is what an adaptive restart's checkpoint says the last window
// taught, beside the files, calls and notes every checkpoint carries.
func lessons(reason string) string {
	return reason + ". Lessons so far: at the last session's rate the phase would not finish within its budget. " +
		"The files changed, failed commands and progress notes below are what it tried; do not repeat its exploration, " +
		"finish the remaining tasks by the most direct route, and record each with `debussy progress`."
}

// openWindow gives an adaptive restart a fresh budget window.
func (p *phaseRun) openWindow() {
	r := p.r
	used := p.spendOf().OpenWindow(r.now())
	r.recorder.event("budget_window", map[string]any{"phase": p.ph.ID, "used_pct": used})
}
