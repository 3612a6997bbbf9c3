#!/usr/bin/env bash
# Runs Cairn locally: PostgreSQL and Redis (started or installed as needed),
# then cairn-api on :8080 (CAIRN_LISTEN_ADDR) and one cairn-generator, built
# into ${CARGO_TARGET_DIR:-~/.cache/cairn-target}/release. The first start
# prints the default team, project and tokens once and keeps them in
# .cairn/bootstrap.txt (readable only by you); later starts say where they are.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
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

# Something already answers on the API's address (another run.sh, say):
# say so now, not after a build and a bind error that names no address.
listening() {
    local host=${1%:*} port=${1##*:}
    host=${host#[}; host=${host%]}
    case $host in '' | 0.0.0.0 | '*') host=127.0.0.1 ;; ::) host=::1 ;; esac
    timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>/dev/null
}
address_free() {
    if listening "$CAIRN_LISTEN_ADDR"; then
        echo "error: $CAIRN_LISTEN_ADDR (CAIRN_LISTEN_ADDR) is already in use, by another cairn-api or run.sh perhaps." >&2
        echo "Stop that, or pick a free address: CAIRN_LISTEN_ADDR=127.0.0.1:8081 scripts/run.sh" >&2
        exit 1
    fi
}
address_free
psql "$CAIRN_PG_ADMIN_URL" -Atqc "SELECT 1 FROM pg_database WHERE datname = 'cairn'" | grep -q 1 ||
    psql "$CAIRN_PG_ADMIN_URL" -qc "CREATE DATABASE cairn"

scripts/fetch-model.sh || echo "warning: embedding model not fetched: search is full-text only" >&2
cargo build --release -p cairn-api -p cairn-generator -p cairn -p cairn-hook
bin="$CARGO_TARGET_DIR/release"
url="http://$CAIRN_LISTEN_ADDR"
saved="$root/.cairn/bootstrap.txt"
# The banner's own `Try:` line uses a $CAIRN_TOKEN nothing sets: it is left
# out, and the line below (which reads the token from the saved file) printed.
out=$("$bin/cairn" admin bootstrap --url "$url" | grep -v '^Try: ')
if grep -q "already bootstrapped" <<<"$out"; then
    # The secrets were shown once, on the first start: not again.
    if [ -f "$saved" ]; then
        echo "Already bootstrapped: the first start's team, project and tokens are in $saved (readable only by you)."
    else
        echo "$out"
        echo "The first start's secrets are not in $saved: mint one with \`$bin/cairn tokens create\` (an admin token) or POST /v1/admin/tokens."
    fi
else
    (umask 077; echo "$out" > "$saved")
    echo "$out"
    echo "(saved in $saved, readable only by you)"
fi
echo "cairn CLI: $bin/cairn and the hook binary $bin/cairn-hook (built into CARGO_TARGET_DIR=$CARGO_TARGET_DIR; put both on your PATH, or: cargo install --path crates/cli && cargo install --path crates/hook)"
if [ -f "$saved" ]; then
    file=$(printf '%q' "$saved")
    echo "Try: export CAIRN_TOKEN=\"\$(sed -n '/^ingest token/{n;s/^ *//;p;}' $file)\"; curl -H \"Authorization: Bearer \$CAIRN_TOKEN\" $url/v1/info"
fi

address_free  # again: the build may have taken minutes
"$bin/cairn-generator" &
generator=$!
trap 'kill $generator 2>/dev/null || true' EXIT
echo "cairn-api on $url (docs at $url/docs, dashboard at $url/); Ctrl-C stops both"
status=0
"$bin/cairn-api" || status=$?
if [ "$status" -ne 0 ] && listening "$CAIRN_LISTEN_ADDR"; then
    echo "error: cairn-api could not listen on $CAIRN_LISTEN_ADDR (CAIRN_LISTEN_ADDR): something else took it; pick a free address" >&2
fi
exit "$status"
