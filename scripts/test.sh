#!/usr/bin/env bash
# make test: every package with -race on the pinned claude CLI, and the
# end-to-end package again on npm's `latest` CLI (make test-latest). Three
# go test runs side by side: the end-to-end package on each CLI (each spends
# most of its time waiting on the CLI's start-up and the fake API's scripted
# latency, about one core busy) and the other packages one at a time. Run in
# one `go test ./...`, the end-to-end package started last, after gitcommit,
# and one pass after the other took 16 of CI's 20 minutes. The end-to-end
# logs are held back and printed after the rest, so the output does not
# interleave. A failure of any fails the target.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
go=${GO:-go}

pinned=${DEBUSSY_TEST_CLAUDE:-$(bash scripts/install-claude.sh | tail -n1)} || exit 1
latest=${DEBUSSY_TEST_CLAUDE_LATEST:-$(bash scripts/install-claude.sh latest | tail -n1)} || exit 1

logs=$(mktemp -d "${TMPDIR:-/tmp}/debussy-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT
DEBUSSY_TEST_CLAUDE=$pinned \
	$go test -race -count=1 -timeout 20m ./tests/ >"$logs/pinned" 2>&1 &
first=$!
DEBUSSY_TEST_CLAUDE=$latest DEBUSSY_TEST_SECOND_CLI=1 \
	$go test -race -count=1 -timeout 15m ./tests/ >"$logs/latest" 2>&1 &
second=$!

mapfile -t rest < <($go list ./... | grep -vx 'github.com/debussy-dev/debussy/tests')
DEBUSSY_TEST_CLAUDE=$pinned $go test -race -count=1 -p 1 -timeout 20m "${rest[@]}"
rest_rc=$?

wait "$first"
first_rc=$?
wait "$second"
second_rc=$?
echo "--- the end-to-end tests on the pinned CLI ($("$pinned" --version 2>/dev/null | head -n1))"
cat "$logs/pinned"
echo "--- the end-to-end tests on npm's latest CLI ($("$latest" --version 2>/dev/null | head -n1))"
cat "$logs/latest"

if ((rest_rc != 0 || first_rc != 0 || second_rc != 0)); then
	echo "make test: failed (other packages: exit $rest_rc; e2e on the pinned CLI: exit $first_rc; on the latest CLI: exit $second_rc)" >&2
	exit 1
fi
