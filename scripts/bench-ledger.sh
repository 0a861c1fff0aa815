#!/usr/bin/env bash
# Times reading the ledger (the phases' Debussy-Event trailers) on a long
# synthetic history against `git log --grep='^Debussy-Event:'` over it:
# BEFORE commits (200,000) are fast-imported, then the plan of PHASES (300)
# phases is added and each phase gets a few commits, the last a debussy
# outcome (completed). `debussy status`, `debussy matrix` and
# `debussy check` are timed (median of ROUNDS) against the git log, and the
# whole is done again with twice the history before the plan: the ledger's
# cost must not grow with it. Prints, last:
#   <before> commits: status X ms, matrix Y ms, check Z ms, git log --grep G ms; ratios status=.. matrix=.. check=..
# Usage: scripts/bench-ledger.sh [ROUNDS]   (BEFORE=200000 PHASES=300)
set -euo pipefail

rounds=${1:-3}
before=${BEFORE:-200000}
phases=${PHASES:-300}
repo_root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-ledger.XXXXXX")
trap 'rm -rf "$work"' EXIT

bin="$work/debussy"
(cd "$repo_root" && go build -o "$bin" .)
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
# check also asks whether a run could start here (claude found, root
# allowed): a stand-in claude and IS_SANDBOX, so it passes and is timed whole.
printf '#!/bin/sh\necho "2.1.197 (Claude Code)"\n' >"$work/claude"
chmod +x "$work/claude"
export DEBUSSY_CLAUDE_BIN=$work/claude IS_SANDBOX=1
git config --global user.name bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main

# stream N_BEFORE: a fast-import stream of N_BEFORE ordinary commits, then
# the plan, then per phase two ordinary commits and its outcome commit.
stream() {
	awk -v n="$1" -v phases="$phases" 'BEGIN {
		t = 1600000000; mark = 0
		for (i = 1; i <= n; i++) {
			mark++
			printf "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\n", mark, t + mark
			msg = "work " i
			printf "data %d\n%s\n", length(msg), msg
			if (mark > 1) printf "from :%d\n", mark - 1
			body = "line " i "\n"
			printf "M 100644 inline src/f%d.txt\ndata %d\n%s\n", i % 1000, length(body), body
		}
		mark++
		printf "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\n", mark, t + mark
		printf "data 8\nadd plan\nfrom :%d\n", mark - 1
		table = "# Bench - Master Plan\n\n| Phase | Title | Focus | Risk | Status |\n|---|---|---|---|---|\n"
		for (p = 1; p <= phases; p++) table = table sprintf("| %d | [Phase %d](phase-%d.md) | bench | Low | Not Started |\n", p, p, p)
		printf "M 100644 inline plan/MASTER_PLAN.md\ndata %d\n%s\n", length(table), table
		for (p = 1; p <= phases; p++) {
			ph = sprintf("# Phase %d: Phase %d\n\n**Depends On:** N/A\n\n## Tasks\n- [ ] do phase %d\n", p, p, p)
			printf "M 100644 inline plan/phase-%d.md\ndata %d\n%s\n", p, length(ph), ph
		}
		for (p = 1; p <= phases; p++) {
			for (k = 1; k <= 3; k++) {
				mark++
				printf "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\n", mark, t + mark
				if (k < 3) msg = "phase " p " step " k
				else msg = sprintf("debussy: phase %d \"Phase %d\" - completed\n\nDebussy-Run: r1\nDebussy-Plan: plan/MASTER_PLAN.md\nDebussy-Phase: %d\nDebussy-Event: completed\nDebussy-Session: 1\nDebussy-Sessions: 1\nDebussy-Restarts: 0", p, p, p)
				printf "data %d\n%s\nfrom :%d\n", length(msg), msg, mark - 1
				body = "phase " p " " k "\n"
				printf "M 100644 inline out/p%d.txt\ndata %d\n%s\n", p, length(body), body
			}
		}
	}'
}

now_ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1000000 }'; }
timed() {
	local t0 t1
	t0=$(now_ms)
	"$@" >/dev/null 2>"$work/err" || echo "warning: $* failed: $(tail -1 "$work/err")" >&2
	t1=$(now_ms)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

results=()
bench() {
	local n=$1 dir="$work/repo-$1" s=() m=() c=() g=() sm mm cm gm
	git init -q "$dir"
	stream "$n" | git -C "$dir" fast-import --quiet
	git -C "$dir" checkout -q main
	printf '.debussy/\n' >"$dir/.git/info/exclude"
	git -C "$dir" gc -q
	for ((r = 1; r <= rounds; r++)); do
		g+=("$(timed git -C "$dir" log --grep='^Debussy-Event:' --format=%H%n%B HEAD)")
		s+=("$(cd "$dir" && timed "$bin" status)")
		m+=("$(cd "$dir" && timed "$bin" matrix plan/MASTER_PLAN.md)")
		c+=("$(cd "$dir" && timed "$bin" check plan/MASTER_PLAN.md)")
	done
	(cd "$dir" && "$bin" status | tail -2)
	gm=$(median "${g[@]}") sm=$(median "${s[@]}") mm=$(median "${m[@]}") cm=$(median "${c[@]}")
	results+=("$n commits before the plan: status $sm ms, matrix $mm ms, check $cm ms, git log --grep $gm ms; ratios $(
		awk -v s="$sm" -v m="$mm" -v c="$cm" -v g="$gm" 'BEGIN { printf "status=%.2f matrix=%.2f check=%.2f", s / g, m / g, c / g }')")
}

bench "$before"
bench $((2 * before))
printf '%s\n' "${results[@]}"
