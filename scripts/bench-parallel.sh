#!/usr/bin/env bash
# Runs one generated plan — 16 phases in 4 chains of 4 (a DAG of width 4) —
# on the fake Anthropic API with the real claude CLI, once with --parallel 1
# and once with --parallel 4, each in a fresh copy of the same repository.
# Every phase is one session of three API turns (each answered after 300 ms,
# like a model's latency) whose tool sleeps 1 s (like a build), writes its own
# file and signals done; its gate checks the file. Prints each run's wall time
# and debussy's own CPU time (its process only, not claude's or the tools':
# utime+stime from /proc/PID/stat, sampled until it exits), per phase.
#
# The ideal is the critical path: each phase's duration (phase_started to
# phase_ended in the run's events.jsonl) as measured one by one, summed along
# each chain; the longest chain is the least wall time four workers could
# take, so the ideal speedup is the serial wall time over it (about 4). On a
# machine with fewer cores than the width, the ideal capped by the cores is
# reported too (the phases mostly wait, so this cap is not strict). The
# achieved speedup over each ideal is the figure of merit (goal >= 0.8 where
# the machine has the cores). The last line is
#   parallel: 1 → X s, 4 → Y s, ratio=R; ideal=I (capped by N cores: C); achieved/ideal=Q (capped: Q2); debussy's CPU per phase: A ms (1), B ms (4)
# Usage: scripts/bench-parallel.sh   (Linux: reads /proc; needs jq)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-parallel.XXXXXX")
fake_pid=
cleanup() {
	[[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

phases=16 width=4
(cd "$root" && go build -o "$work/bin/debussy" . && go build -o "$work/bin/fakeapi" ./tests/fakeapi/cmd/fakeapi)
claude=${DEBUSSY_TEST_CLAUDE:-$(bash "$root/scripts/install-claude.sh" | tail -n1)}
# TZ=UTC: the event log's timestamps end in Z, which phase_ms reads.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" GIT_CONFIG_NOSYSTEM=1 TZ=UTC
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main

# The plan and the API script.
repo="$work/template"
mkdir -p "$repo/plan"
{
	printf '# Bench - Master Plan\n\n| Phase | Title | Focus | Risk | Status |\n|---|---|---|---|---|\n'
	for i in $(seq $phases); do
		printf '| %d | [Step %d](phase-%d.md) | bench | Low | Not Started |\n' "$i" "$i" "$i"
	done
} >"$repo/plan/MASTER_PLAN.md"
for i in $(seq $phases); do
	deps="N/A"
	((i > width)) && deps="[Phase $((i - width))](phase-$((i - width)).md)"
	printf '# Phase %d: Step %d\n\n**Depends On:** %s\n\n## Tasks\n- [ ] write out-%d.txt\n\n## Gates\n- out: `test -f out-%d.txt`\n' \
		"$i" "$i" "$deps" "$i" "$i" >"$repo/plan/phase-$i.md"
done
{
	printf '{"conversations": [\n'
	for i in $(seq $phases); do
		((i > 1)) && printf ',\n'
		printf '{"name": "phase %d", "match": "phase-%d.md -----", "turns": [\n' "$i" "$i"
		printf '  {"usage": {"input_tokens": 3000, "cache_read_input_tokens": 20000}, "delay": "300ms", "blocks": [{"tool": "Bash", "input": {"command": "sleep 1 && echo %d > out-%d.txt", "description": "work"}}]},\n' "$i" "$i"
		printf '  {"usage": {"input_tokens": 3000, "cache_read_input_tokens": 21000}, "delay": "300ms", "blocks": [{"tool": "Bash", "input": {"command": "debussy done --phase %d", "description": "done"}}]},\n' "$i"
		printf '  {"usage": {"input_tokens": 3000, "cache_read_input_tokens": 22000}, "delay": "300ms", "blocks": [{"text": "Phase %d done."}]}\n' "$i"
		printf ']}'
	done
	printf '\n]}\n'
} >"$work/script.json"
printf '.debussy/\n' >"$repo/.gitignore"
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" commit -q -m "bench plan"

now_ms() { date +%s%3N; }

# run N: one run with --parallel N in a fresh copy; prints "WALL_MS CPU_MS".
run() {
	local n=$1 dir="$work/run-$1" url pid t0 t1 cpu=0 stat rc
	cp -a "$repo" "$dir"
	rm -f "$work/api-url"
	"$work/bin/fakeapi" -script "$work/script.json" -url-file "$work/api-url" >"$work/fakeapi-$n.log" 2>&1 &
	fake_pid=$!
	for _ in $(seq 50); do [[ -s $work/api-url ]] && break; sleep 0.1; done
	url=$(cat "$work/api-url")
	t0=$(now_ms)
	(
		cd "$dir"
		exec env ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=bench \
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
			IS_SANDBOX=1 DEBUSSY_CLAUDE_BIN="$claude" \
			"$work/bin/debussy" run plan/MASTER_PLAN.md --parallel "$n" --quiet
	) >"$work/run-$n.out" 2>"$work/run-$n.err" &
	pid=$!
	# utime+stime (fields 14 and 15, after the command's parenthesis) of
	# debussy's own process, in clock ticks, until it exits.
	while stat=$(cat "/proc/$pid/stat" 2>/dev/null); do
		cpu=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' <<<"$stat")
		sleep 0.05
	done
	rc=0
	wait "$pid" || rc=$?
	t1=$(now_ms)
	kill "$fake_pid" 2>/dev/null || true
	wait "$fake_pid" 2>/dev/null || true
	fake_pid=
	if ((rc != 0)); then
		echo "debussy --parallel $n exited $rc:" >&2
		cat "$work/run-$n.err" >&2
		exit 1
	fi
	for i in $(seq $phases); do
		[[ $(git -C "$dir" show "HEAD:out-$i.txt") == "$i" ]] || { echo "--parallel $n: out-$i.txt not merged" >&2; exit 1; }
	done
	echo "$((t1 - t0)) $((cpu * 1000 / $(getconf CLK_TCK)))"
}

# phase_ms DIR: "PHASE MS" per phase of the run in DIR, from its first
# phase_started to its last phase_ended event.
phase_ms() {
	jq -r 'def ms: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$")
			| (.s + "Z" | fromdateiso8601) * 1000 + (((.f // "") + "000")[0:3] | tonumber);
		select(.event == "phase_started" or .event == "phase_ended") | "\(.event) \(.phase) \(.ts | ms)"' \
		"$1"/.debussy/runs/*/events.jsonl |
		awk '$1 == "phase_started" && !($2 in s) { s[$2] = $3 } $1 == "phase_ended" { e[$2] = $3 }
			END { for (p in s) if (p in e) print p, e[p] - s[p] }'
}

# critical PHASE_MS: "SUM_MS LONGEST_CHAIN_MS" over the chains i, i+width, ...
critical() {
	awk -v w=$width -v n=$phases 'NF == 2 { d[$1] = $2; sum += $2; got++ }
		END {
			if (got != n) { print "phase times for " got " of " n " phases" > "/dev/stderr"; exit 1 }
			for (c = 1; c <= w; c++) { t = 0; for (i = c; i <= n; i += w) t += d[i]; if (t > cp) cp = t }
			print sum, cp
		}' <<<"$1"
}

r1=$(run 1)
r4=$(run 4)
read -r wall1 cpu1 <<<"$r1"
read -r wall4 cpu4 <<<"$r4"
read -r sum1 cp1 <<<"$(critical "$(phase_ms "$work/run-1")")"
read -r sum4 cp4 <<<"$(critical "$(phase_ms "$work/run-4")")"
cores=$(nproc)
awk -v p=$phases -v width=$width -v cores="$cores" -v w1="$wall1" -v c1="$cpu1" -v w4="$wall4" -v c4="$cpu4" \
	-v s1="$sum1" -v cp1="$cp1" -v s4="$sum4" -v cp4="$cp4" 'BEGIN {
	printf "--parallel 1: %.1f s wall, debussy CPU %d ms (%.0f ms per phase), phases %.2f s each on average\n", w1 / 1000, c1, c1 / p, s1 / p / 1000
	printf "--parallel 4: %.1f s wall, debussy CPU %d ms (%.0f ms per phase), phases %.2f s each on average\n", w4 / 1000, c4, c4 / p, s4 / p / 1000
	ideal = w1 / cp1
	capped = ideal < cores ? ideal : cores
	achieved = w1 / w4
	printf "critical path (longest chain of the one-by-one phase times): %.1f s, so ideal speedup %.2f; %d cores cap it at %.2f\n", cp1 / 1000, ideal, cores, capped
	printf "--parallel 4 own longest chain %.1f s: %.1f s of its wall time is outside the phases of that chain (start, merges, gaps)\n", cp4 / 1000, (w4 - cp4) / 1000
	printf "achieved speedup %.2f = %.2f of ideal, %.2f of the ideal capped by cores\n", achieved, achieved / ideal, achieved / capped
	printf "parallel: 1 → %.1f s, 4 → %.1f s, ratio=%.2f; ideal=%.2f (capped by %d cores: %.2f); achieved/ideal=%.2f (capped: %.2f); debussy'"'"'s CPU per phase: %.0f ms (1), %.0f ms (4)\n", w1 / 1000, w4 / 1000, achieved, ideal, cores, capped, achieved / ideal, achieved / capped, c1 / p, c4 / p
}'
