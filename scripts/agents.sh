#!/usr/bin/env bash
# Installs the real agent CLIs that crates/cli/tests/agent_cli.rs drives
# (Claude Code, from npm) into ${CAIRN_AGENTS_DIR:-$HOME/.cache/cairn-agents},
# pinned to the version the test was written against; does nothing when that
# version is already there. Prints the path of the `claude` binary.
#
# Usage: scripts/agents.sh            (then: cargo test -p cairn --test agent_cli)
set -euo pipefail

# The version agent_cli.rs was checked with. Bump deliberately: a new Claude
# Code may change its hook input or where it puts SessionStart context.
CLAUDE_CODE_VERSION=2.1.330

dir="${CAIRN_AGENTS_DIR:-$HOME/.cache/cairn-agents}"
bin="$dir/node_modules/.bin/claude"
pkg="$dir/node_modules/@anthropic-ai/claude-code"

installed_version() {
    # `claude --version` prints "2.1.330 (Claude Code)"; the package.json is
    # checked too, so a half-finished install is not taken for a good one.
    [ -x "$bin" ] || return 0
    local v
    v=$(node -p "require('$pkg/package.json').version" 2>/dev/null) || return 0
    [ "$v" = "$CLAUDE_CODE_VERSION" ] || return 0
    "$bin" --version 2>/dev/null | awk '{print $1}'
}

if [ "$(installed_version)" != "$CLAUDE_CODE_VERSION" ]; then
    command -v npm >/dev/null || { echo "agents.sh: npm is needed (Node 20 or later)" >&2; exit 1; }
    mkdir -p "$dir"
    echo "agents.sh: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $dir" >&2
    # The package is a native binary (from a per-platform optional dependency)
    # that its postinstall links over bin/claude.exe; it declares node>=22
    # but the binary does not run on Node, so Node 20's npm installs it fine.
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
    if [ "$(installed_version)" != "$CLAUDE_CODE_VERSION" ]; then
        # An npm that skips install scripts leaves the placeholder in place:
        # run the package's own postinstall, which links the native binary.
        (cd "$pkg" && node install.cjs) >&2
    fi
    got=$(installed_version)
    if [ "$got" != "$CLAUDE_CODE_VERSION" ]; then
        echo "agents.sh: $bin reports '${got:-nothing}', wanted $CLAUDE_CODE_VERSION" >&2
        exit 1
    fi
fi

echo "$bin"
