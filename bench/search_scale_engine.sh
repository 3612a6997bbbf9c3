#!/usr/bin/env bash
# bench/search_scale_engine.sh: the retrieval engine (crates/retrieval) at
# scale, through the real API. Builds cairn-bench in release mode and runs
# search_scale (its //! doc says what it measures): a fresh database with
# 1,000,000 memories in 10 projects (synthetic vectors: 2,000 embedded title
# sentences plus noise; 50 real needles), the index build, search latency at
# concurrency 8 per query shape and mode, recall@5 of the needles, and how
# soon a new memory is found. Prints markdown; the report is also written to
# bench/out/search_scale_engine-<date>.txt.
#
# Usage: bench/search_scale_engine.sh [--quick] [other search_scale flags]
#   --quick   100,000 memories instead of 1,000,000 (a few minutes)
#
# Needs: Postgres on 127.0.0.1:5432 (user postgres, trust auth), Redis on
# 127.0.0.1:6379, cargo, the local embedding model (scripts/fetch-model.sh).
# Knobs (environment): SKIP_BUILD=1, PGHOST/PGPORT/PGUSER, BENCH_REDIS_URL.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" search_scale_engine

for tool in cargo psql; do command -v "$tool" >/dev/null || die "$tool is required but not on PATH"; done
psql -d postgres -Atqc 'SELECT 1' >/dev/null || die "cannot reach Postgres at $PGUSER@$PGHOST:$PGPORT"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building cairn-bench (release) into $CARGO_TARGET_DIR"
    (cd "$ROOT" && cargo build --release -p cairn-bench --bin search_scale)
fi
BIN=$CARGO_TARGET_DIR/release/search_scale
[[ -x $BIN ]] || die "no binary at $BIN"

log "search_scale $*: seeding, then measuring; progress in ${WORK#"$ROOT"/}/search_scale.log"
"$BIN" "$@" 2>"$WORK/search_scale.log" | tee "$REPORT" ||
    { tail -20 "$WORK/search_scale.log" >&2; die "search_scale failed; see $WORK/search_scale.log"; }
log "report: ${REPORT#"$ROOT"/}"
