#!/usr/bin/env bash
# make test: every package with -race (but see norace and inproc below) on
# the pinned claude CLI, the end-to-end tests of what the CLI does again on
# npm's `latest` CLI (make test-latest), and their core (restart, handoff,
# done, stop, usage limit) on the oldest CLI debussy supports
# (runner.OldestCLI). The work is a queue of jobs run a few at a time
# (DEBUSSY_TEST_JOBS, default 3): the other packages' -race pass, the
# TestRunner family, and each end-to-end test on each CLI as its own job.
# Logs are held back and printed after the rest, so the output does not
# interleave. A failure of any job fails the target.
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
core=(TestRunTwoPhasesComplete TestRunRestartsBeforeContextFills TestStagesHandoff TestAgentHandoff TestSignalsAsFacts TestRunInterruptAndResume TestUsageLimitWithoutWaiting)

# The tests' temporary files (their repositories, .debussy stores, the
# CLI's homes, go test's own builds) on a tmpfs where the machine lets us
# mount one that can run programs: on this ext4 disk (mounted with discard)
# every temp dir's files cost kernel time to write and remove. gitcommit's
# tests, ~7,000 git processes, took 59 s of CPU (44 s of it the kernel's)
# with TMPDIR on the disk and 33 s on a tmpfs; orchestrator's 91 and 76.
# Not /dev/shm, though it is a tmpfs too: the sandbox's tests need their
# trees off /dev (claude's own sandbox gives each command a fresh /dev, so
# it could not see them: sandbox.underDev). A tmpfs of our own under /tmp
# needs root (CI, and the chaos tests' disk fault, run as root); elsewhere
# the disk serves. TMPDIR set by the caller is kept.
shm=
if [[ -z ${TMPDIR:-} && $(id -u) == 0 ]]; then
	shm=$(mktemp -d /tmp/debussy-test-tmpfs.XXXXXX) || shm=
	if [[ -n $shm ]] && mount -t tmpfs -o mode=1777 tmpfs "$shm" 2>/dev/null; then
		if printf '#!/bin/sh\nexit 0\n' >"$shm/probe" && chmod +x "$shm/probe" && "$shm/probe"; then
			export TMPDIR=$shm
		else
			umount "$shm"
			rmdir "$shm"
			shm=
		fi
	else
		[[ -n $shm ]] && rmdir "$shm"
		shm=
	fi
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/debussy-test.XXXXXX")
trap 'rm -rf "$logs"; if [[ -n $shm ]]; then umount -l "$shm" && rmdir "$shm"; fi' EXIT

# debussy for the end-to-end jobs, built once each way (tests/main_test.go
# would link it again in each job's test process, ~3 s of CPU each):
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

# The race detector is on debussy, the program under test (its runs with
# phases at once, or acted on while they run: see raceBinary), and on the
# test binary only for the TestRunner family, the tests that run debussy's
# runner package in the test process itself. The rest of the test binary is
# the harness and the fake API (whose own package runs under -race with the
# others): with -race it cost 8–30 % of a test's CPU (the most on long
# streams) and could find nothing of debussy's. A test that calls debussy's
# code in process is named TestRunner*, or this rule changes.
inproc='^TestRunner'
# The end-to-end test binary without -race, linked once for every job that
# runs it (2.3 s of CPU a link, measured: go test -run '^$' 5.5 s of CPU,
# the built binary 3.2). It runs in its package's directory, as go test
# runs it; e2etest prints go test's ok/FAIL line after it.
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

# Without the race detector: packages of pure computation, where neither
# the code nor its tests start a goroutine, so the detector has nothing to
# find and only slows them (secrets' regexps: 87 s of CPU with it, 21 s
# without, and its TestLarge scans its full text only without it). A
# package that starts a goroutine, or tests one used concurrently, leaves
# this list.
norace='github.com/debussy-dev/debussy/secrets'
mapfile -t rest < <($go list ./... | grep -vx -e 'github.com/debussy-dev/debussy/tests' -e "$norace")
# runner's two 100 MB-line tests run in the pass without -race: they are
# one goroutine copying and parsing bytes, where the detector has nothing
# to find and took 22 s of CPU of their 24 (norace: 6 s).
huge='^(TestSessionHugeLine|TestLineReaderHugeLine)$'

# One job: its kind and, for an end-to-end job, the test's name. Its output
# goes to its own log, its exit code beside it.
job() {
	local kind=$1 name=${2:-} out=$logs/out/$1${2:+.$2} rc=0
	case $kind in
	packages)
		# Two packages at a time: gitcommit's and orchestrator's tests are
		# the longest jobs of all (84 s and 65 s alone), and start first.
		DEBUSSY_TEST_CLAUDE=$pinned gotest -race -count=1 -p 2 -timeout 20m -skip "$huge" "${rest[@]}" || rc=$?
		gotest -count=1 -timeout 20m "$norace" || rc=$?
		gotest -count=1 -timeout 20m -run "$huge" ./runner/ || rc=$?
		;;
	inproc)
		DEBUSSY_TEST_CLAUDE=$pinned gotest -race -count=1 -timeout 30m -run "$inproc" ./tests/ || rc=$?
		;;
	pinned)
		DEBUSSY_TEST_CLAUDE=$pinned e2etest "pinned, $name" -test.timeout 15m -test.run "^$name\$" || rc=$?
		;;
	latest | oldest)
		# The second CLIs run debussy without -race (see tests/main_test.go):
		# those passes are about what the CLI does. An unmarked test skips at
		# once.
		local bin=$latest
		[[ $kind == oldest ]] && bin=$oldest
		DEBUSSY_TEST_CLAUDE=$bin DEBUSSY_TEST_SECOND_CLI=1 \
			e2etest "$kind, $name" -test.timeout 15m -test.run "^$name\$" || rc=$?
		;;
	esac >"$out" 2>&1
	echo "$rc" >"$out.rc"
}

# The queue: the packages first (the longest job), then the oldest CLI's
# core (its usage-limit test waits 30 s, beside the packages' CPU), the
# pinned CLI's tests and the latest's, whose unmarked tests skip at once and
# fill the end. The suite is bound by CPU on two cores, about 1,600
# CPU-seconds of work, most of it starting processes (the CLI, git,
# debussy), and every process more at once costs CPU of its own on a
# virtual machine, where a switch between processes is dear: 8 CLI sessions
# took 12.7–13.4 CPU-s one at a time, 14.0–14.7 two at a time, 14.6–15.8
# four and 16.0–18.1 eight. The whole suite (CI=true .ci/run, fresh clone):
# nine passes side by side, the layout before the queue, 1,900–2,040 CPU-s
# and 16:30–17:40 (3 runs); the queue four at a time 1,781 and 15:38 (1
# run), three at a time 1,575–1,912 and 15:00–17:40 (3 runs). A whole run
# varies by a sixth there under load, so the queue's gain is its lower mean
# CPU and load (4–7 against 10–15), not a wall time shown.
mkdir -p "$logs/out"
{
	echo packages
	echo inproc
	printf 'oldest %s\n' "${core[@]}"
	printf 'pinned %s\n' "${e2e[@]}"
	printf 'latest %s\n' "${all[@]}"
} >"$logs/queue"
jobs=${DEBUSSY_TEST_JOBS:-3}
running=0
while read -r kind name; do
	if ((running >= jobs)); then
		wait -n
		running=$((running - 1))
	fi
	job "$kind" "$name" </dev/null &
	running=$((running + 1))
done <"$logs/queue"
wait

# The logs in queue order: a passing end-to-end job by its ok line, the
# packages and a failing job in full.
failed=()
while read -r kind name; do
	out=$logs/out/$kind${name:+.$name}
	if [[ $(cat "$out.rc" 2>/dev/null) != 0 ]]; then
		failed+=("$kind${name:+ $name}")
		cat "$out"
	elif [[ $kind == packages || $kind == inproc ]]; then
		cat "$out"
	else
		tail -n1 "$out"
	fi
done <"$logs/queue"
echo "--- CLIs: pinned $("$pinned" --version 2>/dev/null | head -n1); latest $("$latest" --version 2>/dev/null | head -n1); oldest $("$oldest" --version 2>/dev/null | head -n1)"
if ((${#failed[@]} > 0)); then
	printf 'make test: failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
