#!/usr/bin/env bash
# Writes the files docker-compose.yml mounts as secrets, into
# ${CAIRN_SECRETS_DIR:-./secrets}: random values, one per file. The folder
# is its owner's only (0700); the files are 0644 because Compose bind-mounts
# them as they are and the containers run as other users (cairn 10001,
# postgres 999). A file that already exists is kept, so running it again
# changes nothing. The folder gets a .gitignore of its own (`*`).
#
#   postgres_password       Postgres' password for the cairn user
#   database_url            CAIRN_DATABASE_URL_FILE (holds that password)
#   jwt_secret              CAIRN_JWT_SECRET_FILE (64 hex characters)
#   provider_api_key        empty; put an Anthropic or OpenAI-compatible key
#                           there and set CAIRN_ANTHROPIC_API_KEY_FILE or
#                           CAIRN_OPENAI_API_KEY_FILE=/run/secrets/provider_api_key
#   grafana_admin_password  Grafana's admin password (metrics profile)
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${CAIRN_SECRETS_DIR:-./secrets}"
mkdir -p "$dir"
chmod 700 "$dir"
[ -e "$dir/.gitignore" ] || printf '*\n' >"$dir/.gitignore"

random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

write() { # name value: writes only when absent
    if [ ! -e "$dir/$1" ]; then
        (umask 022 && printf '%s\n' "$2" >"$dir/$1")
        echo "wrote $dir/$1" >&2
    fi
}

write postgres_password "$(random_hex 24)"
write database_url "postgres://cairn:$(head -n1 "$dir/postgres_password")@postgres:5432/cairn"
write jwt_secret "$(random_hex 32)"
write grafana_admin_password "$(random_hex 12)"
[ -e "$dir/provider_api_key" ] || (umask 022 && : >"$dir/provider_api_key")
