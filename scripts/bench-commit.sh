#!/usr/bin/env bash
# Times debussy's commit path (gitcommit.CommitAll, from one process that
# makes every commit, as a run does; COLD=1: gitcommit.Open + CommitAll in a
# process per commit) against `git add -A && git commit` on an identical copy of a repo
# with 20,000 tracked files and 5,000 ignored files in node_modules/, after
# editing 10 tracked files and adding 1 new one. Each round edits both copies
# the same way, times both (alternating which goes first), and checks that
# both commits have the same tree. A second case adds 20,000 new files per
# round (new-ROUND/). Prints medians; the last two lines are
#   edit 10 of 20k: debussy X ms vs git Y ms ratio=R
#   add 20k new: debussy X ms vs git Y ms ratio=R
# Usage: scripts/bench-commit.sh [ROUNDS]   (default 5)
# TRACKED=100000 EDITS=20 size the tree and the edits (the issue-33 cases:
# 20 edits in a 20,000- and a 100,000-file tree); ADD_NEW=0 skips the
# 20,000-new-files case.
set -euo pipefail

rounds=${1:-5}
tracked=${TRACKED:-20000} edits=${EDITS:-10} add_new=${ADD_NEW:-1}
repo_root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-commit.XXXXXX")
trap '[[ -n "${SERVE_PID:-}" ]] && kill "$SERVE_PID" 2>/dev/null; rm -rf "$work"' EXIT

bin="$work/benchcommit"
(cd "$repo_root" && go build -o "$bin" ./scripts/benchcommit)

# Neither copy may read the user's own git config or ignore files (set after
# the build: go finds its module cache through HOME).
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.com
git config --global init.defaultBranch main
# A background `gc --auto` after the initial commit would race the copy.
git config --global gc.autoDetach false

a="$work/debussy" b="$work/git"
"$bin" gen "$a" "$tracked" 5000
git -C "$a" init -q
git -C "$a" add -A
git -C "$a" commit -q -m initial
git -C "$a" gc -q # both copies start packed, like a repository with history
cp -a "$a" "$b"
# A copy has new inodes and ctimes: let git refresh both indexes so neither
# side pays for re-hashing 20,000 files in the timed part.
sleep 1
git -C "$a" update-index -q --refresh
git -C "$b" update-index -q --refresh

now_ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1000000 }'; }
# debussy's commits come from one process all run long (a Repo kept across
# commits, as the orchestrator keeps it): "$bin" serve commits once per line
# it reads. COLD=1 starts a process per commit instead (Open included).
if [[ -z "${COLD:-}" ]]; then
	coproc SERVE { "$bin" serve "$a"; }
fi
time_debussy() {
	local t0 t1 reply
	t0=$(now_ms)
	if [[ -n "${COLD:-}" ]]; then
		"$bin" commit "$a" >/dev/null
	else
		echo commit >&"${SERVE[1]}"
		read -r reply <&"${SERVE[0]}" || { echo "benchcommit serve ended" >&2; exit 1; }
	fi
	t1=$(now_ms)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}
time_git() { local t0 t1; t0=$(now_ms); git -C "$b" add -A && git -C "$b" commit -q -m bench; t1=$(now_ms); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'; }

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench_case NAME PREPARE...: each round runs "PREPARE DIR ROUND" on both
# copies, then times both commits and checks they agree.
bench_case() {
	local name=$1 round d g ta tb dm gm ratio
	shift
	local ds=() gs=()
	for ((round = 1; round <= rounds; round++)); do
		"$@" "$a" "$round"
		"$@" "$b" "$round"
		if ((round % 2)); then
			d=$(time_debussy); g=$(time_git)
		else
			g=$(time_git); d=$(time_debussy)
		fi
		ta=$(git -C "$a" rev-parse 'HEAD^{tree}') tb=$(git -C "$b" rev-parse 'HEAD^{tree}')
		if [[ "$ta" != "$tb" ]]; then
			echo "$name round $round: trees differ: debussy $ta vs git $tb" >&2
			git -C "$a" diff --stat HEAD~1 >&2
			git -C "$b" diff --stat HEAD~1 >&2
			exit 1
		fi
		if [[ -n "$(git -C "$a" status --porcelain)" ]]; then
			echo "$name round $round: debussy left changes behind:" >&2
			git -C "$a" status --porcelain >&2
			exit 1
		fi
		echo "$name round $round: debussy $d ms, git $g ms (tree $ta)"
		ds+=("$d") gs+=("$g")
	done
	dm=$(median "${ds[@]}") gm=$(median "${gs[@]}")
	ratio=$(awk -v d="$dm" -v g="$gm" 'BEGIN { printf "%.2f", d / g }')
	results+=("$name: debussy $dm ms vs git $gm ms ratio=$ratio")
}

edit_files() { "$bin" edit "$1" "$2" "$edits" "$tracked"; }
add_new_files() { "$bin" addnew "$1" "$2" 20000; }

results=()
bench_case "edit $edits of $tracked" edit_files
if ((add_new)); then bench_case "add 20k new" add_new_files; fi
printf '%s\n' "${results[@]}"
