package plans

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Presets follow what the repository has: the runner prefix for Python and
// JavaScript tools, and what "tests" means.
func TestPresets(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		gate  Gate
		want  string // "" means no preset
	}{
		{"plain ruff", nil, Gate{Name: "ruff"}, "ruff check ."},
		{"uv via pyproject", []string{"pyproject.toml"}, Gate{Name: "ruff"}, "uv run ruff check ."},
		{"uv via uv.lock", []string{"uv.lock"}, Gate{Name: "pytest"}, "uv run pytest"},
		{"poetry", []string{"pyproject.toml", "poetry.lock"}, Gate{Name: "mypy"}, "poetry run mypy ."},
		{"npx", []string{"package.json"}, Gate{Name: "eslint"}, "npx eslint ."},
		{"pnpm", []string{"package.json", "pnpm-lock.yaml"}, Gate{Name: "tsc"}, "pnpm exec tsc --noEmit"},
		{"npm test by name", []string{"package.json"}, Gate{Name: "npm test"}, "npm test"},
		{"tests in a Go module", []string{"go.mod"}, Gate{Name: "Tests"}, "go test ./..."},
		{"tests in a crate", []string{"Cargo.toml"}, Gate{Name: "tests"}, "cargo test"},
		{"tests in a uv project", []string{"pyproject.toml"}, Gate{Name: "tests"}, "uv run pytest"},
		{"tests in a node project", []string{"package.json"}, Gate{Name: "test"}, "npm test"},
		{"tests with nothing to go on", nil, Gate{Name: "tests"}, ""},
		{"clippy", []string{"Cargo.toml"}, Gate{Name: "cargo_clippy"}, "cargo clippy -- -D warnings"},
		{"coverage with a minimum", []string{"pyproject.toml"}, Gate{Name: "coverage", Requirement: "≥ 80%"}, "uv run pytest --cov --cov-fail-under=80"},
		{"coverage at least", nil, Gate{Name: "Coverage", Requirement: "at least 75 % of lines"}, "pytest --cov --cov-fail-under=75"},
		{"coverage without a minimum", nil, Gate{Name: "coverage", Requirement: "no decrease from current (~66%)"}, ""},
		{"unknown tool", []string{"go.mod"}, Gate{Name: "i18n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := lookupPreset(Presets(root), tt.gate)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("lookupPreset(%q) = %q, %v; want %q", tt.gate.Name, got, ok, tt.want)
			}
		})
	}
}

func TestGateProgram(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"uv run ruff check .", "uv"},
		{"  go test ./...", "go"},
		{"CGO_ENABLED=0 GOFLAGS=-mod=mod go vet ./...", "go"},
		{"./scripts/check.sh", "./scripts/check.sh"},
		{`test -z "$(gofmt -l .)"`, "test"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := (Gate{Command: tt.cmd}).Program(); got != tt.want {
			t.Errorf("Program(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// The gofmt preset fails naming the files to format, not with "exit 1"
// and no output; a formatted tree passes.
func TestGofmtPresetNamesFiles(t *testing.T) {
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Skip("gofmt not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ugly.go"), []byte("package x\nfunc  F( ) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gate := func() ([]byte, error) {
		cmd := exec.Command("sh", "-c", Presets(dir)["gofmt"])
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	out, err := gate()
	if err == nil || !strings.Contains(string(out), "ugly.go") {
		t.Errorf("gofmt preset on an unformatted file: err %v, output %q; want a failure naming ugly.go", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "ugly.go"), []byte("package x\n\nfunc F() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := gate(); err != nil {
		t.Errorf("gofmt preset on a formatted tree: %v %s", err, out)
	}
}
