package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	vcs := func(main string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: main}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	rev := []string{"vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-27T10:00:00Z"}
	tests := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		line, image           string // image "" is no release
	}{
		{"stamped release", "v1.2.3", "0123456789abcdef0123", "2026-12-05T10:00:00Z", vcs("(devel)"),
			"v1.2.3 (commit 0123456789ab, 2026-12-05T10:00:00Z, go1.26.8)", ImageRepo + ":v1.2.3"},
		{"stamped pre-release", "v1.3.0-rc.1", "0123456", "", vcs("(devel)"),
			"v1.3.0-rc.1 (commit 0123456, go1.26.8)", ImageRepo + ":v1.3.0-rc.1"},
		{"stamped snapshot", "v0.0.1-snapshot-0123456", "0123456789abcdef0123", "2026-12-05T10:00:00Z", vcs("(devel)"),
			"v0.0.1-snapshot-0123456 (commit 0123456789ab, 2026-12-05T10:00:00Z, go1.26.8)", ""},
		{"stamped, no build info", "v1.2.3", "abc", "", nil, "v1.2.3 (commit abc)", ImageRepo + ":v1.2.3"},
		{"go install at a tag", "", "", "", vcs("v1.2.3"), "v1.2.3 (go1.26.8)", ImageRepo + ":v1.2.3"},
		{"go build at a commit", "", "", "", vcs("v0.0.0-20261127100000-0123456789ab+dirty", append(rev, "vcs.modified", "true")...),
			"dev (v0.0.0-20261127100000-0123456789ab+dirty, commit 0123456789ab+dirty, 2026-11-27T10:00:00Z, go1.26.8)", ""},
		{"go build after a tag", "", "", "", vcs("v1.2.4-0.20261127100000-0123456789ab"),
			"dev (v1.2.4-0.20261127100000-0123456789ab, go1.26.8)", ""},
		{"vcs only", "", "", "", vcs("(devel)", rev...), "dev (commit 0123456789ab, 2026-11-27T10:00:00Z, go1.26.8)", ""},
		{"nothing known", "", "", "", vcs("(devel)"), "dev (built without a version or VCS info, go1.26.8)", ""},
		{"no build info", "", "", "", nil, "dev (built without a version or VCS info)", ""},
		{"stamped dev", "dev", "0123456", "", vcs("(devel)"), "dev (commit 0123456, go1.26.8)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := From(tt.version, tt.commit, tt.date, tt.bi)
			if got := in.String(); got != tt.line {
				t.Errorf("String() = %q, want %q", got, tt.line)
			}
			img, ok := in.Image()
			if img != tt.image || ok != (tt.image != "") || in.Release() != ok {
				t.Errorf("Image() = %q, %v (Release %v), want %q", img, ok, in.Release(), tt.image)
			}
		})
	}
}

// A build stamped the way the Makefile, goreleaser and the Dockerfile stamp
// it says so: the -X paths name this package's variables.
func TestStampedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds debussy")
	}
	bin := filepath.Join(t.TempDir(), "debussy")
	pkg := "github.com/debussy-dev/debussy/internal/buildinfo"
	ldflags := "-X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=feedfacefeedfacefeedface -X " + pkg + ".date=2026-12-05T10:00:00Z"
	cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "../..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); !strings.HasPrefix(got, "debussy v9.8.7 (commit feedfacefeed, 2026-12-05T10:00:00Z, go") {
		t.Errorf("a stamped build's version: %q", got)
	}
}
