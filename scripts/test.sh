#!/usr/bin/env bash
# make test: every package with -race on the pinned claude CLI, and at the
# same time the end-to-end package again on npm's `latest` CLI (make
# test-latest). The two passes run side by side because each spends most of
# its time waiting on the CLI and the fake API's scripted latency (about one
# core busy each): one after the other took 16 of CI's 20 minutes. The
# second pass's output is held back and printed after the first's, so the
# logs do not interleave. A failure of either fails the target.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
go=${GO:-go}

pinned=${DEBUSSY_TEST_CLAUDE:-$(bash scripts/install-claude.sh | tail -n1)} || exit 1
latest=${DEBUSSY_TEST_CLAUDE_LATEST:-$(bash scripts/install-claude.sh latest | tail -n1)} || exit 1

log=$(mktemp "${TMPDIR:-/tmp}/debussy-test-latest.XXXXXX")
trap 'rm -f "$log"' EXIT
DEBUSSY_TEST_CLAUDE=$latest DEBUSSY_TEST_SECOND_CLI=1 \
	$go test -race -count=1 -timeout 15m ./tests/ >"$log" 2>&1 &
second=$!

DEBUSSY_TEST_CLAUDE=$pinned $go test -race -count=1 -p 2 -timeout 20m ./...
first_rc=$?

wait "$second"
second_rc=$?
echo "--- the end-to-end tests on npm's latest CLI ($("$latest" --version 2>/dev/null | head -n1))"
cat "$log"

if ((first_rc != 0 || second_rc != 0)); then
	echo "make test: failed (pinned CLI pass: exit $first_rc; latest CLI pass: exit $second_rc)" >&2
	exit 1
fi
