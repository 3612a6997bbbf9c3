#!/usr/bin/env bash
# Installs the OpenID Connect provider the sign-in tests start (npm
# oauth2-mock-server: discovery, JWKS, authorization code with PKCE, signed
# ID tokens) into $HOME/.cache/cairn-tools/oidc; silent when it is there.
set -euo pipefail

dir="$HOME/.cache/cairn-tools/oidc"
want=(oauth2-mock-server@9.3.0)
if [ "$(cat "$dir/.pins" 2>/dev/null)" != "${want[*]}" ] || [ ! -d "$dir/node_modules/oauth2-mock-server" ]; then
    echo "installing ${want[*]} into $dir" >&2
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"cairn-oidc-provider","private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --silent "${want[@]}" >/dev/null
    echo "${want[*]}" >"$dir/.pins"
fi
