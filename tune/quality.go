package tune

import (
	"github.com/debussy-dev/debussy/history"
)

// Quality is what the history says about how sessions fared after a
// restart: shown beside the cost, never priced into it.
type Quality struct {
	Restarts int `json:"restarts"` // restarts recorded, which the signals below follow
	// Gates after a restart: the gate runs that ended an attempt whose
	// last session was the first after a restart, and how many failed;
	// Elsewhere the same for every other attempt.
	GatesAfterRestart        int `json:"gates_after_restart"`
	GateFailuresAfterRestart int `json:"gate_failures_after_restart"`
	GatesElsewhere           int `json:"gates_elsewhere"`
	GateFailuresElsewhere    int `json:"gate_failures_elsewhere"`
	RereadsAfterRestart      int `json:"rereads_after_restart"`
	Compactions              int `json:"compactions"`
	RereadsAfterCompaction   int `json:"rereads_after_compaction"`
	Warned                   int `json:"warned_sessions"`
	AgentHandoffs            int `json:"agent_handoffs"`
	AgentHandoffsDeclined    int `json:"agent_handoffs_declined"`
}

// quality reads the signals from the streams.
func quality(streams []history.Stream) Quality {
	var q Quality
	for _, st := range streams {
		seen := map[string]bool{} // files read or edited so far in the stream
		for si, s := range st.Sessions {
			after := si > 0 && st.Sessions[si-1].End == history.EndRestart
			if after {
				q.Restarts++
				q.RereadsAfterRestart += rereads(s.Turns, seen)
				q.GatesAfterRestart += s.GatesRun
				q.GateFailuresAfterRestart += s.GatesFailed
			} else {
				q.GatesElsewhere += s.GatesRun
				q.GateFailuresElsewhere += s.GatesFailed
			}
			if s.Warned {
				q.Warned++
				switch {
				case s.AgentHandoff:
					q.AgentHandoffs++
				case s.Trigger == "context":
					q.AgentHandoffsDeclined++ // told it could hand off, it ran to the threshold
				}
			}
			for ti, t := range s.Turns {
				if t.Compacted {
					q.Compactions++
					q.RereadsAfterCompaction += rereads(s.Turns[ti:], seen)
				}
				for _, c := range t.Calls {
					if c.FilePath != "" {
						seen[c.FilePath] = true
					}
				}
			}
		}
	}
	return q
}

// rereads counts the files read in turns before the first edit that an
// earlier session (or the part before a compaction) had read or edited.
func rereads(turns []history.Turn, seen map[string]bool) int {
	counted := map[string]bool{}
	for _, t := range turns {
		for _, c := range t.Calls {
			switch c.Name {
			case "Write", "Edit", "MultiEdit", "NotebookEdit":
				return len(counted)
			case "Read":
				if seen[c.FilePath] {
					counted[c.FilePath] = true
				}
			}
		}
	}
	return len(counted)
}
