package config

import (
	_ "embed"
	"slices"
)

// example.yaml is the same file as the repository's .debussy.example.yaml
// (a test keeps them equal): go:embed cannot reach outside the package.
//
//go:embed example.yaml
var example []byte

// Example returns the documented configuration `debussy init` writes: every
// key with its default and allowed values. It loads to Defaults().
func Example() []byte { return slices.Clone(example) }

//go:embed init.yaml
var initFile []byte

// InitFile returns the short configuration `debussy init` writes: the keys
// people change, each with a comment, then the rest, all commented out at
// their defaults — so that a key appended at the end never collides with
// one already set. It loads to Defaults().
func InitFile() []byte { return slices.Clone(initFile) }
