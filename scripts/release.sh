#!/usr/bin/env bash
# debussy's release artifacts, by goreleaser (.goreleaser.yaml):
#   scripts/release.sh snapshot   HEAD as a snapshot (v0.0.1-snapshot-<commit>) into
#                                 dist/: archives, checksums.txt, an SBOM per archive;
#                                 publishes nothing (make release-snapshot)
#   scripts/release.sh release    the tag HEAD is at, published as a GitHub release
#                                 (GITHUB_TOKEN; .github/workflows/release.yml)
# Installs the pinned goreleaser and cyclonedx-gomod (go install, from the Go
# module proxy) once into ${DEBUSSY_TOOLS_CACHE:-$HOME/.cache/debussy/tools}:
# building goreleaser costs about 3 minutes of CPU the first time.
# After a snapshot it checks what it made: every archive has its SBOM, the
# checksums verify, and this machine's binary says the stamped version.
set -euo pipefail
cd "$(dirname "$0")/.."

goreleaser_version=v2.17.0
cyclonedx_version=v1.10.0
tools=${DEBUSSY_TOOLS_CACHE:-$HOME/.cache/debussy/tools}

# tool NAME MODULE/CMD VERSION: the path of the pinned tool, installed first
# if it is missing.
tool() {
	local dir=$tools/$1-$3
	if [[ ! -x $dir/$1 ]]; then
		echo "release: installing $2@$3 into $dir" >&2
		mkdir -p "$dir"
		GOBIN=$dir go install "$2@$3" >&2
	fi
	echo "$dir/$1"
}

mode=${1:-snapshot}
goreleaser=$(tool goreleaser github.com/goreleaser/goreleaser/v2 "$goreleaser_version")
CYCLONEDX_GOMOD=$(tool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod "$cyclonedx_version")
export CYCLONEDX_GOMOD

# What .goreleaser.yaml stamps: the commit, its short name and its date.
DEBUSSY_COMMIT=$(git rev-parse HEAD)
DEBUSSY_SHORT_COMMIT=$(git rev-parse --short=7 HEAD)
DEBUSSY_COMMIT_DATE=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
DEBUSSY_COMMIT_TIMESTAMP=$(git log -1 --format=%ct HEAD)
export DEBUSSY_COMMIT DEBUSSY_SHORT_COMMIT DEBUSSY_COMMIT_DATE DEBUSSY_COMMIT_TIMESTAMP

case $mode in
snapshot)
	"$goreleaser" release --snapshot --clean
	;;
release)
	"$goreleaser" release --clean
	exit 0
	;;
*)
	echo "usage: release.sh [snapshot|release]" >&2
	exit 2
	;;
esac

# What a user of the snapshot checks.
cd dist
shopt -s nullglob
archives=(debussy_*.tar.gz)
if ((${#archives[@]} != 4)); then
	echo "release: ${#archives[@]} archives in dist/, want 4 (linux and darwin, amd64 and arm64)" >&2
	exit 1
fi
for a in "${archives[@]}"; do
	if [[ ! -s $a.sbom.json ]]; then
		echo "release: $a has no SBOM ($a.sbom.json)" >&2
		exit 1
	fi
done
sha256sum --quiet -c checksums.txt
os=$(go env GOOS) arch=$(go env GOARCH)
here=(debussy_*_"${os}_${arch}".tar.gz)
if ((${#here[@]} == 1)); then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "${here[0]}" -C "$tmp" debussy
	"$tmp/debussy" version
fi
ls -l
