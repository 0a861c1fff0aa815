#!/usr/bin/env bash
# Installs the Claude Code CLI version the end-to-end tests are pinned to into
# ${DEBUSSY_CLAUDE_CACHE:-$HOME/.cache/debussy/claude-code} (npm, no global
# install). Idempotent: does nothing when that version is already there.
# The last line of output is the binary's path:
#   DEBUSSY_TEST_CLAUDE=$(scripts/install-claude.sh | tail -n1) go test ./tests/...
set -euo pipefail

version=2.1.197
pkg=@anthropic-ai/claude-code
dir=${DEBUSSY_CLAUDE_CACHE:-$HOME/.cache/debussy/claude-code}
bin=$dir/node_modules/.bin/claude
manifest=$dir/node_modules/$pkg/package.json

installed_version() {
	[[ -f $manifest ]] || return 0
	# No jq/node dependency for a one-field read.
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n1
}

if [[ -x $bin && $(installed_version) == "$version" ]]; then
	echo "claude $version already installed in $dir" >&2
	echo "$bin"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "install-claude: npm not found; install Node.js (>= 18) first" >&2
	exit 1
fi

mkdir -p "$dir"
echo "installing $pkg@$version into $dir" >&2
# --save-exact pins package.json too, so a later plain `npm install` there
# cannot drift to a newer CLI.
npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error "$pkg@$version" >&2

got=$(installed_version)
if [[ $got != "$version" || ! -x $bin ]]; then
	echo "install-claude: expected $pkg@$version at $bin, found version '${got:-none}'" >&2
	exit 1
fi
"$bin" --version >&2
echo "$bin"
