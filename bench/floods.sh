#!/usr/bin/env bash
# bench/floods.sh: what one bad token and 400 slow clients get from a release
# cairn-api with its default limits. Prints requests/s a single bad token gets
# before 429, and the API's RSS before, during and after 400 clients that each
# send half of a 2 MB body and hold. Writes bench/out/floods-<date>.txt.
#
# Needs Postgres on 127.0.0.1:5432 and Redis on 127.0.0.1:6379; the database
# cairn_bench_floods is dropped and recreated. Knobs: SKIP_BUILD=1,
# BENCH_API_BIN (another cairn-api binary, e.g. an older build), SLOW (400).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/common.sh" floods
DB=cairn_bench_floods
BIN=${BENCH_API_BIN:-$CARGO_TARGET_DIR/release/cairn-api}
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building cairn-api and the flood bench (release)"
    (cd "$ROOT" && cargo build --release -p cairn-api && cargo build --release -p cairn-bench --bin flood)
fi
psql -d postgres -v ON_ERROR_STOP=1 -q -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
PORT=18180
while (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do PORT=$((PORT + 1)); done
API_LOG=$WORK/api.log
CAIRN_DATABASE_URL=postgres://$PGUSER@$PGHOST:$PGPORT/$DB CAIRN_REDIS_URL=redis://127.0.0.1:6379 \
    CAIRN_JWT_SECRET=bench-only-secret-0123456789abcdef0123456789abcdef \
    CAIRN_LISTEN_ADDR=127.0.0.1:$PORT RUST_LOG=warn "$BIN" >"$API_LOG" 2>&1 &
API_PID=$!
trap 'kill $API_PID 2>/dev/null || true' EXIT
for _ in $(seq 600); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz" || true) == 200 ]] && break
    sleep 0.1
done
TOKEN=$(awk '/ingest token/ { if ((getline line) > 0) { gsub(/[[:space:]]/, "", line); print line }; exit }' "$API_LOG")
[[ -n $TOKEN ]] || die "no ingest token in the bootstrap banner"
ulimit -n 8192 2>/dev/null || true
"$CARGO_TARGET_DIR/release/flood" --url "http://127.0.0.1:$PORT" --token "$TOKEN" --pid "$API_PID" \
    --slow "${SLOW:-400}" | tee "$REPORT"
log "report: $REPORT"
