#!/usr/bin/env bash
# make test: every package with -race (but see norace and inproc below) on
# the pinned claude CLI, the end-to-end tests of what the CLI does again on
# npm's `latest` CLI (make test-latest), and their core (restart, handoff,
# done, stop, usage limit) on the oldest CLI debussy supports
# (runner.OldestCLI). Nine go test runs side by side: the end-to-end package
# on the pinned CLI in four shards plus its TestRunner family, on the latest
# CLI (in two halves) and on the oldest (each spends most of its time in the CLI's
# start-up, about 1–2 s of CPU per session), and the other packages two at
# a time. Run in one `go test ./...`, the end-to-end
# package started last, after gitcommit, and one pass after the other took
# 16 of CI's 20 minutes. The end-to-end logs are held back and printed after
# the rest, so the output does not interleave. A failure of any fails the
# target.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
go=${GO:-go}
# make test runs `go vet ./...` (every analyzer) before this script, so go
# test's own vet pass (a subset, on each package it builds) is off: in a
# fresh clone it cost 13 s of CPU for the -race pass alone.
gotest() { $go test -vet=off "$@"; }

pinned=${DEBUSSY_TEST_CLAUDE:-$(bash scripts/install-claude.sh | tail -n1)} || exit 1
latest=${DEBUSSY_TEST_CLAUDE_LATEST:-$(bash scripts/install-claude.sh latest | tail -n1)} || exit 1
oldest=${DEBUSSY_TEST_CLAUDE_OLDEST:-$(bash scripts/install-claude.sh oldest | tail -n1)} || exit 1
# Which end-to-end tests run on a second CLI (npm's latest, the oldest):
# those that call claudetest.CLISensitive(t, why), the tests of what the CLI
# does — its stream format, hooks and control requests, interrupts and
# signals, compaction, usage limits and API errors, its default model,
# window and cost, permission modes and shell. A test of debussy's own logic
# that merely needs *a* claude is not marked: it runs on the pinned CLI
# only (claudetest.Bin skips it when DEBUSSY_TEST_SECOND_CLI=1), and must
# not depend on what differs between CLI versions. Each test of the core
# below must be marked, or the oldest pass skips it.
# The end-to-end core the oldest supported CLI must pass: a few minutes.
core='^(TestRunTwoPhasesComplete|TestRunRestartsBeforeContextFills|TestStagesHandoff|TestAgentHandoff|TestSignalsAsFacts|TestRunInterruptAndResume|TestUsageLimitWithoutWaiting)$'

# The tests' temporary files (their repositories, .debussy stores, the
# CLI's homes, go test's own builds) on tmpfs where the machine has one
# that can run programs: on this ext4 disk (mounted with discard) every
# temp dir's files cost kernel time to write and remove. gitcommit's
# tests, ~7,000 git processes, took 59 s of CPU (44 s of it the kernel's)
# with TMPDIR on the disk and 33 s on /dev/shm; orchestrator's 91 and 76.
# The tests read and write files the same way on either. TMPDIR set by
# the caller is kept.
shm=
if [[ -z ${TMPDIR:-} && -d /dev/shm && -w /dev/shm ]]; then
	shm=$(mktemp -d /dev/shm/debussy-test.XXXXXX) || shm=
	if [[ -n $shm ]] && printf '#!/bin/sh\nexit 0\n' >"$shm/probe" && chmod +x "$shm/probe" && "$shm/probe"; then
		export TMPDIR=$shm
	else
		[[ -n $shm ]] && rm -rf "$shm" # mounted noexec: go test could not run its builds there
		shm=
	fi
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/debussy-test.XXXXXX")
trap 'rm -rf "$logs" ${shm:+"$shm"}' EXIT

# debussy for the end-to-end passes, built once each way (tests/main_test.go
# would link it again in each of the five go test runs, ~3 s of CPU each):
# with -race and without (tests/main_test.go raceBinary says which runs
# take which: on the pinned CLI, those with phases at once or a test acting
# on the run while it goes; on the latest and the oldest, none).
mkdir -p "$logs/race" "$logs/norace"
$go build -race -o "$logs/race/debussy" . || exit 1
$go build -o "$logs/norace/debussy" . || exit 1
export DEBUSSY_TEST_BIN=$logs/race/debussy DEBUSSY_TEST_BIN_NORACE=$logs/norace/debussy
# A -race program sleeps 1 s at exit by default (the race runtime's
# atexit_sleep_ms), and the end-to-end tests start debussy often: each run,
# and each `debussy done`, `progress` or `handoff` the agent calls. Five core
# tests took 46 s with the sleep and 31 s without (25 s without -race); a
# race found is still reported and still fails the run (exit 66).
export GORACE=${GORACE:-atexit_sleep_ms=0}

# The pinned pass runs in four shards, its tests dealt out in turn in
# source order (neighbours are alike in cost). Alone at its end, one pass
# kept one core of two busy for its last four minutes in CI; in two halves,
# the last half ran alone for its last four minutes on an idle machine: the
# tests are serial within a pass, and many wait (usage-limit resets, hooks
# that sleep, gitlab-ci-local), so more shards fill the cores rather than
# add CPU. Listing the tests builds the test binary once, so the shards
# start from the build cache.
#
# The race detector is on debussy, the program under test (its runs with
# phases at once, or acted on while they run: see raceBinary), and on the test binary
# only for the TestRunner family, the tests that run debussy's runner
# package in the test process itself. The rest of the test binary is the
# harness and the fake API (whose own package runs under -race with the
# others): with -race it cost 8–30 % of a test's CPU (the most on long
# streams) and could find nothing of debussy's. A test that calls debussy's code in process is named
# TestRunner*, or this rule changes.
inproc='^TestRunner'
# The end-to-end test binary without -race, linked once: the listing and
# seven passes run it (the pinned shards, the latest halves, the oldest
# core), where go test linked it again for each (2.3 s of CPU a link,
# measured: go test -run '^$' 5.5 s of CPU, the built binary 3.2). It runs
# in its package's directory, as go test runs it; e2etest prints go test's
# ok/FAIL line after it.
$go test -vet=off -c -o "$logs/e2e.test" ./tests/ || exit 1
e2etest() {
	local name=$1 start=$SECONDS rc=0
	shift
	(cd tests && "$logs/e2e.test" -test.count=1 "$@") || rc=$?
	if ((rc == 0)); then
		echo "ok  	tests ($name)	$((SECONDS - start))s"
	else
		echo "FAIL	tests ($name)	$((SECONDS - start))s: exit $rc"
	fi
	return "$rc"
}
mapfile -t all < <(DEBUSSY_TEST_CLAUDE=$pinned e2etest list -test.list '^Test' | grep '^Test')
mapfile -t e2e < <(printf '%s\n' "${all[@]}" | grep -v "$inproc")
if ((${#e2e[@]} == 0)); then
	echo "make test: listing the end-to-end tests failed" >&2
	exit 1
fi
shards=4
parts=()
for i in "${!e2e[@]}"; do
	parts[i % shards]+="${parts[i % shards]:+|}${e2e[i]}"
done
pids=()
for h in "${!parts[@]}"; do
	DEBUSSY_TEST_CLAUDE=$pinned \
		e2etest "pinned, shard $h" -test.timeout 30m -test.run "^(${parts[h]})\$" >"$logs/pinned$h" 2>&1 &
	pids+=($!)
done
DEBUSSY_TEST_CLAUDE=$pinned \
	gotest -race -count=1 -timeout 30m -run "$inproc" ./tests/ >"$logs/pinned-inproc" 2>&1 &
pids+=($!)
# The second CLIs run debussy without -race (see tests/main_test.go): those
# passes are about what the CLI does.
# The latest CLI's pass in two halves too (its marked tests, dealt out of
# all of them in turn: the others skip at once): in one, it ended last.
latest_parts=("" "")
for i in "${!all[@]}"; do
	latest_parts[i % 2]+="${latest_parts[i % 2]:+|}${all[i]}"
done
second=()
for h in 0 1; do
	DEBUSSY_TEST_CLAUDE=$latest DEBUSSY_TEST_SECOND_CLI=1 \
		e2etest "latest, half $h" -test.timeout 30m -test.run "^(${latest_parts[h]})\$" >"$logs/latest$h" 2>&1 &
	second+=($!)
done
DEBUSSY_TEST_CLAUDE=$oldest DEBUSSY_TEST_SECOND_CLI=1 \
	e2etest "oldest, core" -test.timeout 20m -test.run "$core" >"$logs/oldest" 2>&1 &
third=$!

# Without the race detector: packages of pure computation, where neither
# the code nor its tests start a goroutine, so the detector has nothing to
# find and only slows them (secrets' regexps: 87 s of CPU with it, 21 s
# without, and its TestLarge scans its full text only without it). A
# package that starts a goroutine, or tests one used concurrently, leaves
# this list.
norace='github.com/debussy-dev/debussy/secrets'
mapfile -t rest < <($go list ./... | grep -vx -e 'github.com/debussy-dev/debussy/tests' -e "$norace")
# Two at a time: one at a time, the other packages (about 240 s of CPU,
# gitcommit's and orchestrator's the most) were the last to end, a third
# of a core against the end-to-end passes.
# runner's two 100 MB-line tests run in the pass without -race: they are
# one goroutine copying and parsing bytes, where the detector has nothing
# to find and took 22 s of CPU of their 24 (norace: 6 s).
huge='^(TestSessionHugeLine|TestLineReaderHugeLine)$'
DEBUSSY_TEST_CLAUDE=$pinned gotest -race -count=1 -p 2 -timeout 20m -skip "$huge" "${rest[@]}"
rest_rc=$?
gotest -count=1 -timeout 20m "$norace"
rest_rc=$((rest_rc | $?))
gotest -count=1 -timeout 20m -run "$huge" ./runner/
rest_rc=$((rest_rc | $?))
wait "$third"
oldest_rc=$?

first_rc=0
for pid in "${pids[@]}"; do
	wait "$pid"
	first_rc=$((first_rc | $?))
done
second_rc=0
for pid in "${second[@]}"; do
	wait "$pid"
	second_rc=$((second_rc | $?))
done
echo "--- the end-to-end tests on the pinned CLI ($("$pinned" --version 2>/dev/null | head -n1)), in four shards and the TestRunner family"
cat "$logs"/pinned*
echo "--- the end-to-end tests on npm's latest CLI ($("$latest" --version 2>/dev/null | head -n1))"
cat "$logs/latest0" "$logs/latest1"
echo "--- the end-to-end core on the oldest supported CLI ($("$oldest" --version 2>/dev/null | head -n1))"
cat "$logs/oldest"

if ((rest_rc != 0 || first_rc != 0 || second_rc != 0 || oldest_rc != 0)); then
	echo "make test: failed (other packages: exit $rest_rc; e2e on the pinned CLI: exit $first_rc; on the latest CLI: exit $second_rc; core on the oldest CLI: exit $oldest_rc)" >&2
	exit 1
fi
