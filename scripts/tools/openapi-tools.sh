#!/usr/bin/env bash
# Installs the tools the contract tests drive, into $HOME/.cache/cairn-tools;
# silent when they are there:
#   openapi-spec-validator  (pip, venv openapi/)   validates openapi/openapi.json
#   openapi-python-client   (pip, venv openapi/)   generates the Python client
#                                                  tests/api/generated_client.rs runs
#   mcp                     (pip, venv openapi/)   the official Python MCP SDK, driven
#                                                  against `cairn mcp` and `/v1/mcp` in both
#                                                  protocol eras (crates/cli/tests/mcp_sdk.rs;
#                                                  the npm SDK 1.x has no 2026-07-28 client)
#   @redocly/cli            (npm, node/)           `redocly lint` on the document
set -euo pipefail

root="$HOME/.cache/cairn-tools"
venv="$root/openapi"
node="$root/node"
py_want=(openapi-spec-validator==0.9.0 openapi-python-client==0.29.1 mcp==2.3.0)
npm_want=(@redocly/cli@2.77.0)

# A stamp of the pins installed: a changed pin reinstalls.
if [ "$(cat "$venv/.pins" 2>/dev/null)" != "${py_want[*]}" ] || [ ! -x "$venv/bin/openapi-python-client" ]; then
    echo "installing ${py_want[*]} into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${py_want[@]}" >/dev/null
    echo "${py_want[*]}" >"$venv/.pins"
fi

if [ "$(cat "$node/.pins" 2>/dev/null)" != "${npm_want[*]}" ] || [ ! -x "$node/node_modules/.bin/redocly" ]; then
    echo "installing ${npm_want[*]} into $node" >&2
    mkdir -p "$node"
    [ -f "$node/package.json" ] || echo '{"name":"cairn-tools","private":true}' >"$node/package.json"
    npm install --prefix "$node" --no-audit --no-fund --silent "${npm_want[@]}" >/dev/null
    echo "${npm_want[*]}" >"$node/.pins"
fi
