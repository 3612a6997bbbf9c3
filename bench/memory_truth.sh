#!/usr/bin/env bash
# bench/memory_truth.sh: memory that stays true, measured (crates/bench/src/bin/memory_truth.rs):
# staleness precision and recall on a replay, the share of injected context
# about changed code before and after, duplicates per 100 observations before
# and after consolidation, PreToolUse file-memory latency at OBSERVATIONS
# (100,000) observations, ask latency and input tokens per question.
# Builds the binary in release mode unless SKIP_BUILD=1; writes
# bench/out/memory_truth-<date>.txt.
#
# Knobs: OBSERVATIONS (100000), FILES (2000), REQUESTS (2000), ASKS (200).
# Needs Postgres on 127.0.0.1:5432 (user postgres, trust) and Redis on 127.0.0.1:6379.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" memory_truth
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building memory_truth (release) into $CARGO_TARGET_DIR"
    (cd "$ROOT" && cargo build --release -p cairn-bench --bin memory_truth)
fi
{
    echo "Cairn memory_truth, $(date -u '+%Y-%m-%d %H:%M') UTC, git $(git -C "$ROOT" rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
    "$CARGO_TARGET_DIR/release/memory_truth" --observations "${OBSERVATIONS:-100000}" --files "${FILES:-2000}" \
        --requests "${REQUESTS:-2000}" --asks "${ASKS:-200}" 2>"$WORK/stderr.log"
} | tee "$REPORT"
log "report written to $REPORT"
