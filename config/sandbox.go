package config

import (
	"fmt"
	"path"
	"strings"
)

// The sandbox's keys (package sandbox applies them; it is not imported
// here: policy imports config and must not reach a process).

// Sandbox modes (sandbox).
const (
	SandboxAuto = "auto"
	SandboxOn   = "on"
	SandboxOff  = "off"
)

func sandboxRules() map[string]rule {
	oneOfModes := func(c *Config) string {
		switch c.Sandbox {
		case SandboxAuto, SandboxOn, SandboxOff:
			return ""
		}
		return fmt.Sprintf("%q is not one of the allowed values", c.Sandbox)
	}
	return map[string]rule{
		"sandbox": {
			allowed: SandboxAuto + " (bound the run where the machine can, say so where it cannot), " + SandboxOn + " (refuse to run unbounded), " + SandboxOff + " (no boundary)",
			check:   oneOfModes,
		},
		"sandbox_write": {
			allowed: `a list of absolute or ~/ paths the agent's tools and the gates may write besides the repository and temp, e.g. ["~/.cache/go-build", "~/.npm"]`,
			check:   eachOf(func(c *Config) []string { return c.SandboxWrite }, checkSandboxPath),
		},
		"sandbox_allow_domains": {
			allowed: `a list of hosts the agent's commands and the gates may reach, e.g. ["proxy.golang.org", "*.npmjs.org"]; [] is no network`,
			check:   eachOf(func(c *Config) []string { return c.SandboxAllowDomains }, checkSandboxDomain),
		},
		"sandbox_deny_read": {
			allowed: `a list of absolute or ~/ paths hidden from the agent's tools and the gates besides the defaults (~/.ssh, ~/.aws, …), e.g. ["~/.config/op"]`,
			check:   eachOf(func(c *Config) []string { return c.SandboxDenyRead }, checkSandboxPath),
		},
	}
}

// eachOf checks every value of a list with check.
func eachOf(get func(c *Config) []string, check func(string) string) func(c *Config) string {
	return func(c *Config) string {
		var bad []string
		for _, v := range get(c) {
			if p := check(v); p != "" {
				bad = append(bad, p)
			}
		}
		return strings.Join(bad, ", ")
	}
}

// checkSandboxPath is the problem with a configured path, "" when it is usable:
// absolute, or under ~.
func checkSandboxPath(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "an empty path"
	case p == "~", strings.HasPrefix(p, "~/"), path.IsAbs(p):
		return ""
	}
	return fmt.Sprintf("%q is neither absolute nor under ~", p)
}

// checkSandboxDomain is the problem with an allowed domain, "" when it is usable:
// a host name, or *. and a domain for its subdomains, as the CLI's own
// sandbox.network.allowedDomains takes them.
func checkSandboxDomain(d string) string {
	host := strings.TrimPrefix(d, "*.")
	switch {
	case host == "":
		return "an empty domain"
	case strings.ContainsAny(host, "/:*@ \t"):
		return fmt.Sprintf("%q is not a host name (no scheme, port, path or inner *)", d)
	}
	return ""
}
