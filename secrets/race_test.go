//go:build race

package secrets

// The race detector slows regexps ~10×; TestLarge then uses less text.
const raceEnabled = true
