package plans

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Presets are the commands of well-known tools, for gates that name a tool
// but no command ("- ruff: 0 errors", as plans written for the Python
// original do). They depend on what the repository at root has: a
// pyproject.toml or uv.lock runs Python tools through `uv run`, a
// pnpm-lock.yaml runs JavaScript tools through pnpm, else npx/npm. Keys are
// normalised gate names (see presetKey).
func Presets(root string) map[string]string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	py := ""
	switch {
	case has("poetry.lock"):
		py = "poetry run "
	case has("uv.lock"), has("pyproject.toml"):
		py = "uv run "
	}
	npx, npm := "npx ", "npm "
	switch {
	case has("pnpm-lock.yaml"):
		npx, npm = "pnpm exec ", "pnpm "
	case has("yarn.lock"):
		npx, npm = "yarn ", "yarn "
	}

	p := map[string]string{
		"ruff":        py + "ruff check .",
		"ruff-format": py + "ruff format --check .",
		"mypy":        py + "mypy .",
		"pyright":     py + "pyright",
		"pytest":      py + "pytest",
		"black":       py + "black --check .",
		"bandit":      py + "bandit -r .",
		"eslint":      npx + "eslint .",
		"tsc":         npx + "tsc --noEmit",
		"prettier":    npx + "prettier --check .",
		"npm-test":    npm + "test",
		"go-test":     "go test ./...",
		"go-vet":      "go vet ./...",
		// The files gofmt would change are the gate's output (tee): a
		// failure that says only "exit 1" names nothing to fix.
		"gofmt":         `test -z "$(gofmt -l . | tee /dev/stderr)"`,
		"staticcheck":   "staticcheck ./...",
		"golangci-lint": "golangci-lint run",
		"cargo-test":    "cargo test",
		"cargo-clippy":  "cargo clippy -- -D warnings",
		"clippy":        "cargo clippy -- -D warnings",
		"cargo-fmt":     "cargo fmt --check",
		"rustfmt":       "cargo fmt --check",
	}
	// "tests" means the test runner of the repository's language; the
	// first marker found wins, in this order.
	switch {
	case has("go.mod"):
		p["tests"] = p["go-test"]
	case has("Cargo.toml"):
		p["tests"] = p["cargo-test"]
	case py != "" || has("requirements.txt") || has("setup.py"):
		p["tests"] = p["pytest"]
	case has("package.json"):
		p["tests"] = p["npm-test"]
	}
	if t, ok := p["tests"]; ok {
		p["test"] = t
	}
	return p
}

var (
	presetSep = regexp.MustCompile(`[\s_]+`)
	// coverageMin is a coverage threshold in a requirement: "≥ 80%",
	// ">= 80 %", "at least 80%", "80%+", "minimum 80%".
	coverageMin = regexp.MustCompile(`(?i)(?:≥|>=|at\s+least|minimum|min\.?)\s*([0-9]{1,3})\s*%|([0-9]{1,3})\s*%\s*\+`)
)

// presetKey normalises a gate name for preset lookup: "Go Test" → "go-test".
func presetKey(name string) string {
	return presetSep.ReplaceAllString(strings.ToLower(strings.TrimSpace(name)), "-")
}

// lookupPreset finds the preset command for gate g. A coverage gate has one
// only when its requirement names a minimum, and only for Python projects
// (pytest-cov's --cov-fail-under).
func lookupPreset(presets map[string]string, g Gate) (string, bool) {
	key := presetKey(g.Name)
	if key == "coverage" {
		pytest, ok := presets["pytest"]
		m := coverageMin.FindStringSubmatch(g.Requirement)
		if !ok || m == nil {
			return "", false
		}
		return pytest + " --cov --cov-fail-under=" + m[1] + m[2], true
	}
	cmd, ok := presets[key]
	return cmd, ok && cmd != ""
}
