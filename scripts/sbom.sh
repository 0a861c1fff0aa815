#!/usr/bin/env bash
# The SBOM of one release archive (goreleaser's sboms step runs it in dist/):
#   scripts/sbom.sh ARCHIVE DOCUMENT VERSION
# takes the debussy binary out of ARCHIVE and writes DOCUMENT, a CycloneDX
# JSON SBOM of what is linked into it (its Go build info), by cyclonedx-gomod
# (CYCLONEDX_GOMOD, which scripts/release.sh installs at a pinned version).
set -euo pipefail

archive=${1:?usage: sbom.sh ARCHIVE DOCUMENT VERSION}
document=${2:?usage: sbom.sh ARCHIVE DOCUMENT VERSION}
version=${3:?usage: sbom.sh ARCHIVE DOCUMENT VERSION}
tool=${CYCLONEDX_GOMOD:-cyclonedx-gomod}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$archive" -C "$tmp" debussy
# No serial number or timestamp: the same commit makes the same SBOM.
"$tool" bin -json -noserial -notimestamp -output "$document" -version "$version" "$tmp/debussy"
