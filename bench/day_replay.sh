#!/usr/bin/env bash
# bench/day_replay.sh: the load model checked: the peak hour of a
# 100-developer team replayed at 10× against a replica set (three cairn-api
# processes, two cairn-generators with the heuristic provider, a private
# Postgres and Redis started by the run). The replay is the fault crate's
# ignored `day_replay` test (crates/fault/tests/fault/day_replay.rs, whose
# //! doc says what it sends and measures), built and run in release mode.
# The table is printed and written to bench/out/day_replay-<date>.txt.
#
# Needs: cargo, and Postgres's initdb/pg_ctl and redis-server on the machine
# (the run starts its own instances). Takes the replay (6 minutes by
# default) plus the drain, after the build.
#
# Knobs (environment): CAIRN_REPLAY_DEVELOPERS (100), CAIRN_REPLAY_SPEED
# (10), CAIRN_REPLAY_MINUTES (60, minutes of the day replayed),
# CAIRN_REPLAY_TURNS_PER_HOUR (15), CAIRN_REPLAY_TOOLS (10).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" day_replay
command -v cargo >/dev/null || die "cargo is required but not on PATH"
log "building cairn-api, cairn-generator and the fault suite (release) into $CARGO_TARGET_DIR"
(cd "$ROOT" && cargo build --release -p cairn-api -p cairn-generator &&
    cargo test --release -p cairn-fault --no-run)
export CAIRN_FAULT_BIN_DIR=$CARGO_TARGET_DIR/release
log "replaying; the services' logs stay in the run's temporary directory"
(cd "$ROOT" && cargo test --release -p cairn-fault --test fault day_replay -- --ignored --nocapture --exact) \
    >"$WORK/replay.txt" 2>"$WORK/replay.log" ||
    { tail -30 "$WORK/replay.log" >&2; die "the replay failed; see ${WORK#"$ROOT"/}/replay.log"; }
{
    echo "# day replay, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$ROOT" rev-parse --short HEAD)"
    echo
    grep '^|' "$WORK/replay.txt"
} | tee "$REPORT"
