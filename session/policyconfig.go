package session

import (
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/policy"
)

// PolicyConfig maps the run's configuration to a session's policy.
func PolicyConfig(c config.Config, phase, handoffPath, root string) policy.Config {
	return policy.ConfigOf(c, phase, handoffPath, root)
}
