package commands

import (
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/internal/buildinfo"
)

// What the generated GitLab and Kubernetes jobs run in and for how long.
const (
	// defaultJobTimeout bounds a phase job when neither --job-timeout nor a
	// time budget says: GitLab's own default, 1 h, cuts a long phase.
	defaultJobTimeout = 6 * time.Hour
	// jobHeadroom is added to a time budget for what a job does besides
	// the sessions: clone, gates, commits and pushes.
	jobHeadroom = 30 * time.Minute

	// imageUID and imageGID are the user the Dockerfile's image runs as;
	// the Kubernetes Jobs run as it (runAsUser, runAsGroup, fsGroup).
	imageUID = 1000
	imageGID = 1000
)

// jobImage is the image of the generated jobs: flag when given, else the
// release image of this debussy. A dev or snapshot build names no
// published image, so it must be told one.
func jobImage(flag string, build buildinfo.Info) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if image, ok := build.Image(); ok {
		return image, nil
	}
	return "", fmt.Errorf("%w: this debussy is not a release (debussy %s), so no image of it is published: "+
		"pass --image IMAGE (e.g. one built with make image and pushed where the jobs pull from; docs/ci.md), "+
		"or generate the pipeline with a release of debussy, whose image is %s:<its version>",
		ErrUsage, build.String(), buildinfo.ImageRepo)
}

// timeoutChoice is a phase job's timeout and where it comes from.
type timeoutChoice struct {
	d   time.Duration
	why string // for the generated file's header
}

// jobTimeout is a phase job's timeout: flag when set, else the config's
// phase time budget, else its plan time budget (a phase cannot outlast
// the plan's), each with jobHeadroom, else defaultJobTimeout.
func jobTimeout(flag time.Duration, cfg config.Config) timeoutChoice {
	switch {
	case flag > 0:
		return timeoutChoice{flag, "--job-timeout"}
	case cfg.Budget.Phase.Duration > 0:
		d := time.Duration(cfg.Budget.Phase.Duration)
		return timeoutChoice{d + jobHeadroom, fmt.Sprintf("budget.phase.duration %s + %s", shortDuration(d), shortDuration(jobHeadroom))}
	case cfg.Budget.Plan.Duration > 0:
		d := time.Duration(cfg.Budget.Plan.Duration)
		return timeoutChoice{d + jobHeadroom, fmt.Sprintf("budget.plan.duration %s + %s", shortDuration(d), shortDuration(jobHeadroom))}
	}
	return timeoutChoice{defaultJobTimeout, "the default; --job-timeout or a time budget changes it"}
}

// shortDuration is d in GitLab's words, rounded up to the minute: "6h",
// "1h 15m", "45m" (GitLab parses these; Go's "6h0m0s" is not its form).
func shortDuration(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	switch h, m := m/60, m%60; {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m == 0:
		return fmt.Sprintf("%dh", h)
	default:
		return fmt.Sprintf("%dh %dm", h, m)
	}
}
