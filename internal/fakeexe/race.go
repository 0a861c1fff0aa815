//go:build race

package fakeexe

const raceEnabled = true
