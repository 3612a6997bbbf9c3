#!/usr/bin/env bash
# Installs the real agent CLIs that crates/cli/tests/agent_cli.rs drives —
# Claude Code, Codex and Gemini CLI, from npm — into
# ${CAIRN_AGENTS_DIR:-$HOME/.cache/cairn-agents}, pinned to the versions the
# test was written against; does nothing when those versions are already
# there. Prints the path of the `claude` binary (the others sit beside it).
#
# Usage: scripts/agents.sh            (then: cargo test -p cairn --test agent_cli)
set -euo pipefail

# The versions agent_cli.rs was checked with. Bump deliberately: a new
# release may change its hook input, its model API calls, or where it puts
# SessionStart context.
PACKAGES=(
    "@anthropic-ai/claude-code@2.1.330"
    "@openai/codex@0.169.0"
    "@google/gemini-cli@0.61.0"
)

dir="${CAIRN_AGENTS_DIR:-$HOME/.cache/cairn-agents}"
modules="$dir/node_modules"

# The installed version of package $1 (empty when absent).
installed() {
    node -p "require('$modules/$1/package.json').version" 2>/dev/null || true
}

# The agents write state under $HOME even for --version: keep the user's clean.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
quiet() { HOME="$scratch" CODEX_HOME="$scratch/.codex" "$@" </dev/null 2>/dev/null; }

# Whether every package is installed at its pinned version (cheap: run on
# every test run). Claude Code is also run, since an npm that skipped its
# postinstall leaves a placeholder where its native binary should be.
ready() {
    local spec name version
    for spec in "${PACKAGES[@]}"; do
        name="${spec%@*}"
        version="${spec##*@}"
        [ "$(installed "$name")" = "$version" ] || return 1
    done
    quiet "$modules/.bin/claude" --version | grep -q "^${PACKAGES[0]##*@} "
}

# After an install: every binary runs (Gemini CLI needs Node 20 or later).
check_all() {
    local bin
    for bin in claude codex gemini; do
        if ! quiet "$modules/.bin/$bin" --version >/dev/null; then
            echo "agents.sh: $modules/.bin/$bin --version fails (node is $(node --version))" >&2
            return 1
        fi
    done
}

if ! ready; then
    command -v npm >/dev/null || { echo "agents.sh: npm is needed (Node 20 or later)" >&2; exit 1; }
    mkdir -p "$dir"
    echo "agents.sh: installing ${PACKAGES[*]} into $dir" >&2
    # Claude Code declares node>=22 but ships a native binary that does not
    # run on Node, so Node 20's npm installs it fine (an EBADENGINE warning).
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}" >&2
    if ! ready; then
        # An npm that skips install scripts leaves Claude Code's placeholder
        # in place: run its own postinstall, which links the native binary.
        (cd "$modules/@anthropic-ai/claude-code" && node install.cjs) >&2
    fi
    ready || { echo "agents.sh: the agent CLIs in $dir are not the pinned ones" >&2; exit 1; }
    check_all
fi

echo "$modules/.bin/claude"
