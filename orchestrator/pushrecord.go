package orchestrator

import "github.com/debussy-dev/debussy/recorder"

// recordPusher is the subscriber that pushes the run's record with --push.
func (r *orun) recordPusher() recorder.Subscriber { return nil }
