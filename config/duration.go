package config

import (
	"fmt"
	"strings"
	"time"
)

// Duration is a time.Duration written as a Go duration string ("90s", "2h")
// in YAML, JSON and DEBUSSY_* variables.
type Duration time.Duration

// String renders the shortest form that parses back: "2h" rather than
// time.Duration's "2h0m0s".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// UnmarshalYAML implements goccy/go-yaml's InterfaceUnmarshaler.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	return d.UnmarshalText([]byte(s))
}

// MarshalYAML implements goccy/go-yaml's InterfaceMarshaler.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText makes JSON (and anything text-based) use the string form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("parse duration: %w", err)
	}
	*d = Duration(v)
	return nil
}
