#!/usr/bin/env bash
# make image: builds the Dockerfile's image as $IMAGE (default debussy:dev)
# with the first builder that works here — docker (when its daemon
# answers), podman, buildah — or $IMAGE_BUILDER; $IMAGE_BUILD_FLAGS go to
# the builder (e.g. --isolation chroot --storage-driver vfs for buildah
# where no daemon or OCI runtime can run). The image's debussy is stamped
# with the commit and its date, and with the tag's version when HEAD is at
# a release tag with a clean tree; else it is a dev build, whose
# `debussy pipeline` asks for --image (docs/ci.md).
set -euo pipefail
cd "$(dirname "$0")/.."

image=${IMAGE:-debussy:dev}
builder=${IMAGE_BUILDER:-}
if [[ -z $builder ]]; then
	if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
		builder=docker
	elif command -v podman >/dev/null 2>&1; then
		builder=podman
	elif command -v buildah >/dev/null 2>&1; then
		builder=buildah
	else
		echo "make image: no builder: install docker, podman or buildah (or set IMAGE_BUILDER)" >&2
		exit 2
	fi
fi

version=dev
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null) && [[ -z $(git status --porcelain --untracked-files=no) ]]; then
	version=$tag
fi
commit=$(git rev-parse HEAD)
date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)

set -x
# IMAGE_BUILD_FLAGS is a list of flags: split on spaces on purpose.
# shellcheck disable=SC2086
"$builder" build ${IMAGE_BUILD_FLAGS:-} -f Dockerfile -t "$image" \
	--build-arg VERSION="$version" --build-arg COMMIT="$commit" --build-arg DATE="$date" .
