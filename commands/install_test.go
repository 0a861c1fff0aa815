package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's Install works from a clone: `make install` puts a working
// debussy in GOBIN. (`go install …@latest` cannot: the module is not
// published, and the README says so.)
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds debussy")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	install := string(readme)[strings.Index(string(readme), "## Install"):]
	install = install[:strings.Index(install[3:], "\n## ")+3]
	if !strings.Contains(install, "make install") || !strings.Contains(install, "is not published") {
		t.Errorf("the README's Install does not say to run make install from a clone:\n%s", install)
	}
	bin := t.TempDir()
	cmd := exec.Command("make", "-C", "..", "install")
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "debussy"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "debussy ") {
		t.Fatalf("the installed debussy version: %v %q", err, out)
	}
}
