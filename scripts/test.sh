#!/usr/bin/env bash
# make test: every package with -race on the pinned claude CLI, the
# end-to-end package again on npm's `latest` CLI (make test-latest), and its
# core (restart, handoff, done, stop, usage limit) on the oldest CLI debussy
# supports (runner.OldestCLI), after the other packages. Four
# go test runs side by side: the end-to-end package on the pinned CLI in two
# halves and on the latest CLI (each spends most of its time in the CLI's
# start-up, about 3 s of CPU per session, about one core busy), and the
# other packages one at a time. Run in one `go test ./...`, the end-to-end
# package started last, after gitcommit, and one pass after the other took
# 16 of CI's 20 minutes. The end-to-end logs are held back and printed after
# the rest, so the output does not interleave. A failure of any fails the
# target.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
go=${GO:-go}

pinned=${DEBUSSY_TEST_CLAUDE:-$(bash scripts/install-claude.sh | tail -n1)} || exit 1
latest=${DEBUSSY_TEST_CLAUDE_LATEST:-$(bash scripts/install-claude.sh latest | tail -n1)} || exit 1
oldest=${DEBUSSY_TEST_CLAUDE_OLDEST:-$(bash scripts/install-claude.sh oldest | tail -n1)} || exit 1
# The end-to-end core the oldest supported CLI must pass: a few minutes.
core='^(TestRunTwoPhasesComplete|TestRunRestartsBeforeContextFills|TestStagesHandoff|TestAgentHandoff|TestSignalsAsFacts|TestRunInterruptAndResume|TestUsageLimitWithoutWaiting)$'

logs=$(mktemp -d "${TMPDIR:-/tmp}/debussy-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# The pinned pass runs in two halves, its tests dealt out alternately in
# source order (neighbours are alike in cost). Alone at its end, one pass
# kept one core of two busy for its last four minutes in CI. Listing the
# tests builds the test binary and debussy once, so the halves start from
# the build cache.
mapfile -t e2e < <(DEBUSSY_TEST_CLAUDE=$pinned $go test -race -list '^Test' ./tests/ | grep '^Test')
if ((${#e2e[@]} == 0)); then
	echo "make test: listing the end-to-end tests failed" >&2
	exit 1
fi
halves=("" "")
for i in "${!e2e[@]}"; do
	halves[i % 2]+="${halves[i % 2]:+|}${e2e[i]}"
done
for h in 0 1; do
	DEBUSSY_TEST_CLAUDE=$pinned \
		$go test -race -count=1 -timeout 30m -run "^(${halves[h]})\$" ./tests/ >"$logs/pinned$h" 2>&1 &
	pids[h]=$!
done
DEBUSSY_TEST_CLAUDE=$latest DEBUSSY_TEST_SECOND_CLI=1 \
	$go test -race -count=1 -timeout 30m ./tests/ >"$logs/latest" 2>&1 &
second=$!

mapfile -t rest < <($go list ./... | grep -vx 'github.com/debussy-dev/debussy/tests')
DEBUSSY_TEST_CLAUDE=$pinned $go test -race -count=1 -p 1 -timeout 20m "${rest[@]}"
rest_rc=$?
DEBUSSY_TEST_CLAUDE=$oldest DEBUSSY_TEST_SECOND_CLI=1 \
	$go test -race -count=1 -timeout 20m -run "$core" ./tests/ >"$logs/oldest" 2>&1
oldest_rc=$?

wait "${pids[0]}"
first_rc=$?
wait "${pids[1]}"
first_rc=$((first_rc | $?))
wait "$second"
second_rc=$?
echo "--- the end-to-end tests on the pinned CLI ($("$pinned" --version 2>/dev/null | head -n1)), in two halves"
cat "$logs/pinned0" "$logs/pinned1"
echo "--- the end-to-end tests on npm's latest CLI ($("$latest" --version 2>/dev/null | head -n1))"
cat "$logs/latest"
echo "--- the end-to-end core on the oldest supported CLI ($("$oldest" --version 2>/dev/null | head -n1))"
cat "$logs/oldest"

if ((rest_rc != 0 || first_rc != 0 || second_rc != 0 || oldest_rc != 0)); then
	echo "make test: failed (other packages: exit $rest_rc; e2e on the pinned CLI: exit $first_rc; on the latest CLI: exit $second_rc; core on the oldest CLI: exit $oldest_rc)" >&2
	exit 1
fi
