#!/usr/bin/env bash
# The built-in demo: debussy's main job, for real, with no account.
# Builds debussy and the fake Anthropic API, installs the pinned claude CLI
# (npm), copies the demo plan into a fresh temporary git repository and runs
# `debussy run` on it. The scripted model fills the first session's context:
# at 70 % debussy warns the agent inside its session, at 80 % it asks for the
# agent's handoff (refusing other tools), the handoff's write ends the
# session cleanly, and debussy commits, checkpoints with the handoff and
# restarts (on a terminal, with the live status line below the log); then
# `debussy logs` renders the session it stopped and `debussy report` draws
# the run as one HTML page, whose path it prints last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/debussy-demo.XXXXXX")
fake_pid=
cleanup() {
	[[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null || true
}
trap cleanup EXIT

echo "==> building debussy and the fake API"
(cd "$root" && go build -o "$work/bin/debussy" . && go build -o "$work/bin/fakeapi" ./tests/fakeapi/cmd/fakeapi)
echo "==> installing the claude CLI (pinned, via npm)"
claude=$(bash "$root/scripts/install-claude.sh" | tail -n1)

echo "==> starting the fake Anthropic API"
"$work/bin/fakeapi" -script "$root/examples/demo/script.json" -url-file "$work/api-url" >"$work/fakeapi.log" 2>&1 &
fake_pid=$!
for _ in $(seq 50); do [[ -s $work/api-url ]] && break; sleep 0.1; done
[[ -s $work/api-url ]] || { echo "fake API did not start; see $work/fakeapi.log" >&2; exit 1; }

repo=$work/repo
mkdir -p "$repo" "$work/home"
cp -r "$root/examples/demo/plan" "$repo/plan"
cp "$root/examples/demo/debussy.yaml" "$repo/.debussy.yaml"
printf '.debussy/\n' >"$repo/.gitignore"
git -C "$repo" init -q -b main
git -C "$repo" -c user.name=demo -c user.email=demo@example.com add -A
git -C "$repo" -c user.name=demo -c user.email=demo@example.com commit -q -m "demo plan"
git -C "$repo" config user.name "debussy demo"
git -C "$repo" config user.email demo@example.com

echo "==> debussy run plan/MASTER_PLAN.md   (in $repo)"
echo
set +e
(
	cd "$repo"
	# The CLI talks to the fake API, with a throw-away HOME; IS_SANDBOX lets
	# --dangerously-skip-permissions run as root.
	env HOME="$work/home" \
		ANTHROPIC_BASE_URL="$(cat "$work/api-url")" ANTHROPIC_API_KEY=demo \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
		IS_SANDBOX=1 DEBUSSY_CLAUDE_BIN="$claude" \
		"$work/bin/debussy" run plan/MASTER_PLAN.md
)
rc=$?
set -e
echo
echo "==> debussy exited $rc; the repository's history:"
git -C "$repo" log --format='%h %s%n%(trailers:only,unfold)' | sed '/^$/d'
echo
checkpoint=$(find "$repo/.debussy/runs" -name 'checkpoint-*.md' | sort | head -n1)
echo "==> the restarted session began with this checkpoint:"
[[ -n $checkpoint ]] && sed -n '1,25p' "$checkpoint"
echo
if [[ -n $checkpoint ]]; then
	# The phase directory is phase-<id>; its first session is the one stopped.
	phase=$(basename "$(dirname "$checkpoint")")
	phase=${phase#phase-}
	echo "==> debussy logs --phase $phase --session 1   (the session debussy stopped, first 40 lines)"
	(cd "$repo" && "$work/bin/debussy" logs --phase "$phase" --session 1 | head -n40) || true
	echo
fi
echo "==> debussy report   (the run drawn: sessions on a timeline, context per turn with what debussy did, tokens and cost, tool calls, files)"
report=$(cd "$repo" && "$work/bin/debussy" report) || report=
echo
echo "files: $repo   (cd $repo && $work/bin/debussy status; $work/bin/debussy logs --help)"
[[ -n $report ]] && echo "report: $report   (open it in a browser; debussy report --md prints it as markdown)"
exit $rc
