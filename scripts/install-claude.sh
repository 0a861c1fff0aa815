#!/usr/bin/env bash
# Installs a Claude Code CLI for the end-to-end tests (npm, no global install)
# and prints its path on the last line of output:
#   DEBUSSY_TEST_CLAUDE=$(scripts/install-claude.sh | tail -n1) go test ./tests/...
#
#   scripts/install-claude.sh          the pinned version, into
#                                      ${DEBUSSY_CLAUDE_CACHE:-$HOME/.cache/debussy/claude-code}
#   scripts/install-claude.sh latest   npm's current `latest` (what users install),
#                                      into ${DEBUSSY_CLAUDE_LATEST_CACHE:-$HOME/.cache/debussy/claude-code-latest}
#   scripts/install-claude.sh oldest   the oldest version debussy supports (README,
#                                      "Claude Code versions"), into
#                                      ${DEBUSSY_CLAUDE_OLDEST_CACHE:-$HOME/.cache/debussy/claude-code-oldest}
#   scripts/install-claude.sh 2.1.150  that exact version, into
#                                      $HOME/.cache/debussy/claude-code-2.1.150 (to measure one)
#
# Idempotent: does nothing when that version is already there (for `latest`,
# one `npm view` asks which version that is today).
set -euo pipefail

pinned=2.1.197
# The oldest version debussy supports: the core e2e tests pass on it in CI
# (scripts/test.sh). Keep in step with commands' minCLIVersion and the README.
oldest=2.1.112
pkg=@anthropic-ai/claude-code
case ${1:-pinned} in
pinned)
	version=$pinned
	dir=${DEBUSSY_CLAUDE_CACHE:-$HOME/.cache/debussy/claude-code}
	;;
latest)
	version=
	dir=${DEBUSSY_CLAUDE_LATEST_CACHE:-$HOME/.cache/debussy/claude-code-latest}
	;;
oldest)
	version=$oldest
	dir=${DEBUSSY_CLAUDE_OLDEST_CACHE:-$HOME/.cache/debussy/claude-code-oldest}
	;;
[0-9]*.[0-9]*.[0-9]*)
	version=$1
	dir=$HOME/.cache/debussy/claude-code-$1
	;;
*)
	echo "usage: install-claude.sh [pinned|latest|oldest|X.Y.Z]" >&2
	exit 2
	;;
esac
bin=$dir/node_modules/.bin/claude
manifest=$dir/node_modules/$pkg/package.json

installed_version() {
	[[ -f $manifest ]] || return 0
	# No jq/node dependency for a one-field read.
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n1
}

if ! command -v npm >/dev/null 2>&1; then
	if [[ -n $version && -x $bin && $(installed_version) == "$version" ]]; then
		echo "claude $version already installed in $dir" >&2
		echo "$bin"
		exit 0
	fi
	echo "install-claude: npm not found; install Node.js (>= 18) first" >&2
	exit 1
fi

if [[ -z $version ]]; then
	version=$(npm view "$pkg@latest" version 2>/dev/null || true)
	if [[ -z $version ]]; then
		# Offline: the latest installed here is better than no second CLI;
		# a clean CI machine has none and fails below.
		if [[ -x $bin && -n $(installed_version) ]]; then
			echo "install-claude: npm could not tell which version $pkg@latest is; using the installed $(installed_version)" >&2
			echo "$bin"
			exit 0
		fi
		echo "install-claude: npm could not tell which version $pkg@latest is" >&2
		exit 1
	fi
fi

if [[ -x $bin && $(installed_version) == "$version" ]]; then
	echo "claude $version already installed in $dir" >&2
	echo "$bin"
	exit 0
fi

mkdir -p "$dir"
echo "installing $pkg@$version into $dir" >&2
# --save-exact pins package.json too, so a later plain `npm install` there
# cannot drift to another CLI.
npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error "$pkg@$version" >&2

got=$(installed_version)
if [[ $got != "$version" || ! -x $bin ]]; then
	echo "install-claude: expected $pkg@$version at $bin, found version '${got:-none}'" >&2
	exit 1
fi
"$bin" --version >&2
echo "$bin"
