// Package buildinfo says which debussy this is: the version, commit and
// date a release build is stamped with, else what Go's build info knows,
// and the image published for a release.
package buildinfo

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// Stamped by release builds (Makefile's stamp, .goreleaser.yaml, the
// Dockerfile) with -ldflags:
//
//	-X github.com/debussy-dev/debussy/internal/buildinfo.version=v1.2.3
//	-X github.com/debussy-dev/debussy/internal/buildinfo.commit=<hash>
//	-X github.com/debussy-dev/debussy/internal/buildinfo.date=<the commit's date, RFC 3339>
//
// An unstamped build (go build, go install from a clone) is a dev build.
var (
	version string
	commit  string
	date    string
)

// ImageRepo is where the release workflow pushes the image of every
// release, tagged with its version: generated jobs never name a floating tag.
const ImageRepo = "ghcr.io/debussy-dev/debussy"

// Dev is the version of a build that names no release.
const Dev = "dev"

// Info is what is known of one build.
type Info struct {
	Version   string // "v1.2.3", a snapshot's "v0.0.1-snapshot-abc1234", or Dev
	Stamped   bool   // Version, Commit and Date came from -ldflags
	Commit    string // the commit's hash, "" when unknown
	Date      string // the commit's date (stamped, or from VCS), RFC 3339
	Dirty     bool   // built from a tree with uncommitted changes
	Pseudo    string // Go's pseudo-version of an unstamped build, if any
	GoVersion string
}

// Get is the running binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return From(version, commit, date, bi)
}

// From is the Info of a build stamped with version, commit and date (each
// "" when not stamped) whose Go build info is bi (nil when unknown).
func From(version, commit, date string, bi *debug.BuildInfo) Info {
	in := Info{Version: version, Commit: commit, Date: date, Stamped: version != ""}
	if bi == nil {
		if !in.Stamped {
			in.Version = Dev
		}
		return in
	}
	in.GoVersion = bi.GoVersion
	if !in.Stamped {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.time":
				in.Date = s.Value
			case "vcs.modified":
				in.Dirty = s.Value == "true"
			}
		}
		// go install …@v1.2.3, or go build at a clean tag: Go names the
		// release itself. Anything else it names is a pseudo-version.
		switch v := bi.Main.Version; {
		case v == "" || v == "(devel)":
			in.Version = Dev
		case isPseudo(v) || strings.Contains(v, "+"):
			in.Version, in.Pseudo = Dev, v
		default:
			in.Version = v
		}
	}
	return in
}

// semverTag is vMAJOR.MINOR.PATCH with an optional pre-release; no build
// metadata (+dirty, +incompatible), which no image tag can carry.
var semverTag = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// isPseudo reports whether v is a Go pseudo-version (…-20261127100000-0123456789ab).
func isPseudo(v string) bool { return pseudo.MatchString(v) }

var pseudo = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}(\+.*)?$`)

// Release reports whether this build is a published release, whose image
// ImageRepo holds: a version tag, not a snapshot, not a dev build.
func (in Info) Release() bool {
	return semverTag.MatchString(in.Version) && !isPseudo(in.Version) &&
		!strings.Contains(strings.ToLower(in.Version), "snapshot")
}

// Image is the release image of this build, and false when it is not a
// release (no image of it is published).
func (in Info) Image() (string, bool) {
	if !in.Release() {
		return "", false
	}
	return ImageRepo + ":" + in.Version, true
}

// String is the version line's text after "debussy ": the version, then
// what else is known, e.g.
//
//	v1.2.3 (commit 0123456789ab, 2026-12-05T10:00:00Z, go1.26.8)
//	dev (commit 0123456789ab+dirty, 2026-11-27T10:00:00Z, go1.26.8)
func (in Info) String() string {
	var parts []string
	if in.Pseudo != "" {
		parts = append(parts, in.Pseudo)
	}
	if in.Commit != "" {
		c := in.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if in.Dirty {
			c += "+dirty"
		}
		parts = append(parts, "commit "+c)
	}
	if in.Date != "" {
		parts = append(parts, in.Date)
	}
	if in.Version == Dev && in.Commit == "" && in.Pseudo == "" {
		parts = append(parts, "built without a version or VCS info")
	}
	if in.GoVersion != "" {
		parts = append(parts, in.GoVersion)
	}
	if len(parts) == 0 {
		return in.Version
	}
	return in.Version + " (" + strings.Join(parts, ", ") + ")"
}
