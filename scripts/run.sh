#!/usr/bin/env bash
# Runs Cairn locally: PostgreSQL and Redis (started or installed as needed),
# then cairn-api on :8080 and one cairn-generator. Prints the default team,
# project and tokens (kept in .cairn/bootstrap.txt, readable only by you).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_services
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"

mkdir -p .cairn && chmod 700 .cairn
if [ ! -f .cairn/env ]; then
    umask 077
    echo "CAIRN_JWT_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" > .cairn/env
fi
set -a; source .cairn/env; set +a
export CAIRN_DATABASE_URL="${CAIRN_DATABASE_URL:-${CAIRN_PG_ADMIN_URL%/*}/cairn}"
export CAIRN_REDIS_URL="${CAIRN_REDIS_URL:-redis://127.0.0.1:6379}"
export CAIRN_LISTEN_ADDR="${CAIRN_LISTEN_ADDR:-127.0.0.1:8080}"
psql "$CAIRN_PG_ADMIN_URL" -Atqc "SELECT 1 FROM pg_database WHERE datname = 'cairn'" | grep -q 1 ||
    psql "$CAIRN_PG_ADMIN_URL" -qc "CREATE DATABASE cairn"

scripts/fetch-model.sh || echo "warning: embedding model not fetched: search is full-text only" >&2
cargo build --release -p cairn-api -p cairn-generator -p cairn
bin="$CARGO_TARGET_DIR/release"
url="http://$CAIRN_LISTEN_ADDR"
out=$("$bin/cairn" admin bootstrap --url "$url")
if grep -q "already bootstrapped" <<<"$out"; then
    [ -f .cairn/bootstrap.txt ] && cat .cairn/bootstrap.txt || echo "$out"
else
    (umask 077; echo "$out" > .cairn/bootstrap.txt)
    echo "$out"
fi

"$bin/cairn-generator" &
generator=$!
trap 'kill $generator 2>/dev/null || true' EXIT
echo "cairn-api on $url (docs at $url/docs); Ctrl-C stops both"
"$bin/cairn-api"
