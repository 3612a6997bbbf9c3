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

# Whether every package is installed at its pinned version and its binary runs.
ready() {
    local spec name version
    for spec in "${PACKAGES[@]}"; do
        name="${spec%@*}"
        version="${spec##*@}"
        [ "$(installed "$name")" = "$version" ] || return 1
    done
    # Claude Code and Codex are native binaries linked in by a postinstall
    # or an optional dependency: check that they run, not only that they exist.
    "$modules/.bin/claude" --version 2>/dev/null | grep -q "^${PACKAGES[0]##*@} " || return 1
    "$modules/.bin/codex" --version >/dev/null 2>&1 || return 1
    [ -x "$modules/.bin/gemini" ] || return 1
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
    ready || { echo "agents.sh: the agent CLIs in $dir do not run" >&2; exit 1; }
fi

echo "$modules/.bin/claude"
