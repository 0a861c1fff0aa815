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
