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
#
# Your own plan against the fake API (docs/fake-api.md):
#   make demo PLAN=path/to/MASTER_PLAN.md SCRIPT=path/to/script.json [CONFIG=path/to/.debussy.yaml]
# PLAN's directory is copied as the repository's plan/; SCRIPT is what the
# fake model answers (examples/demo/done.json: each session runs `debussy
# done`); CONFIG defaults to the demo's.
#
# The binaries are built once into ${DEBUSSY_DEMO_BIN:-~/.cache/debussy/demo-bin}
# (about 44 MB, replaced by each demo); each run's temporary directory keeps
# only its repository and logs, to look at afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
plan=${PLAN:-$root/examples/demo/plan/MASTER_PLAN.md}
script=${SCRIPT:-}
config=${CONFIG:-$root/examples/demo/debussy.yaml}
if [[ -n ${PLAN:-} && -z $script ]]; then
	echo "make demo PLAN=... needs SCRIPT=...: what the fake model answers (docs/fake-api.md; examples/demo/done.json runs debussy done in every session)" >&2
	exit 2
fi
script=${script:-$root/examples/demo/script.json}
for f in "$plan" "$script" "$config"; do
	[[ -f $f ]] || { echo "no such file: $f" >&2; exit 2; }
done
plan=$(cd "$(dirname "$plan")" && pwd)/$(basename "$plan")
script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script")
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
bin=${DEBUSSY_DEMO_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/debussy/demo-bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/debussy-demo.XXXXXX")
fake_pid=
cleanup() {
	[[ -n $fake_pid ]] && kill "$fake_pid" 2>/dev/null || true
}
trap cleanup EXIT

echo "==> building debussy and the fake API (into $bin)"
mkdir -p "$bin"
(cd "$root" && go build -o "$bin/debussy" . && go build -o "$bin/fakeapi" ./tests/fakeapi/cmd/fakeapi)
echo "==> installing the claude CLI (pinned, via npm)"
# DEBUSSY_DEMO_CLAUDE: a claude CLI already installed (the tests' own).
claude=${DEBUSSY_DEMO_CLAUDE:-$(bash "$root/scripts/install-claude.sh" | tail -n1)}

echo "==> starting the fake Anthropic API"
"$bin/fakeapi" -script "$script" -url-file "$work/api-url" >"$work/fakeapi.log" 2>&1 &
fake_pid=$!
for _ in $(seq 50); do [[ -s $work/api-url ]] && break; sleep 0.1; done
[[ -s $work/api-url ]] || { echo "fake API did not start; see $work/fakeapi.log" >&2; exit 1; }

repo=$work/repo
mkdir -p "$repo" "$work/home"
# The plan's directory (the master plan and its phase files), without a
# repository it may sit in.
mkdir -p "$repo/plan"
tar -C "$(dirname "$plan")" --exclude=.git --exclude=.debussy -cf - . | tar -C "$repo/plan" -xf -
cp "$config" "$repo/.debussy.yaml"
printf '.debussy/\n' >"$repo/.gitignore"
git -C "$repo" init -q -b main
git -C "$repo" -c user.name=demo -c user.email=demo@example.com add -A
git -C "$repo" -c user.name=demo -c user.email=demo@example.com commit -q -m "demo plan"
git -C "$repo" config user.name "debussy demo"
git -C "$repo" config user.email demo@example.com

plan_rel=plan/$(basename "$plan")
echo "==> debussy run $plan_rel   (in $repo)"
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
		"$bin/debussy" run "$plan_rel"
)
rc=$?
set -e
echo
echo "==> debussy exited $rc; the repository's history:"
git -C "$repo" log --format='%h %s%n%(trailers:only,unfold)' | sed '/^$/d'
echo
checkpoint=$(find "$repo/.debussy/runs" -name 'checkpoint-*.md' 2>/dev/null | sort | head -n1)
if [[ -n $checkpoint ]]; then
	echo "==> the restarted session began with this checkpoint:"
	sed -n '1,25p' "$checkpoint"
	echo
	# The phase directory is phase-<id>; its first session is the one stopped.
	phase=$(basename "$(dirname "$checkpoint")")
	phase=${phase#phase-}
	echo "==> debussy logs --phase $phase --session 1   (the session debussy stopped, first 40 lines)"
	(cd "$repo" && "$bin/debussy" logs --phase "$phase" --session 1 | head -n40) || true
	echo
fi
echo "==> debussy report   (the run drawn: sessions on a timeline, context per turn with what debussy did, tokens and cost, tool calls, files)"
report=$(cd "$repo" && "$bin/debussy" report) || report=
echo
echo "files: $repo   (cd $repo && $bin/debussy status; $bin/debussy logs --help)"
[[ -n $report ]] && echo "report: $report   (open it in a browser; debussy report --md prints it as markdown)"
exit $rc
