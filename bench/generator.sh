#!/usr/bin/env bash
# bench/generator.sh: measures Cairn's generator and prints figures.
#
# Builds cairn-bench and cairn-generator in release mode and runs the three
# benchmarks of crates/bench (each binary's //! doc says what it measures):
#   1. generator_throughput: jobs/s from claim to completed with the offline
#      heuristic provider, 1 and 2 generator processes, claim→complete p50/p99;
#      beside it pgbench_claim_complete.sql, the same two state-machine
#      statements with nothing else, as the SQL-only upper bound, and
#      pgbench_job.sql, the generator's claim and its one completion
#      statement (written from job/write.rs), rows included;
#   2. prompt_tokens: LLM input tokens per 100 tool events, one prompt per
#      turn (Cairn) against one call per tool event, on a generated session;
#   3. stop_lag: Stop hook answered → turn summary row visible, p50/p90/p99/max.
# The table is printed and written to bench/out/generator-<date>.txt; raw
# output and logs go to bench/out/generator-<date>.d/. See bench/README.md.
#
# Needs: Postgres on 127.0.0.1:5432 (user postgres, trust auth), Redis on
# 127.0.0.1:6379, cargo, psql, pgbench. Each run makes its own cairn_test_*
# database (as the tests do) and drops it when done.
#
# Knobs (environment): JOBS (5000), WORKERS (8), PROCS ("1,2"), SESSIONS (1),
# TURNS (200),
# PGBENCH_CLIENTS (8), PGBENCH_THREADS (2), PGBENCH_SECS (15),
# PGBENCH_ROWS (200000), SKIP_BUILD=1, PGHOST/PGPORT/PGUSER,
# BENCH_REDIS_URL (redis://127.0.0.1:6379/14).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" generator
JOBS=${JOBS:-5000}
WORKERS=${WORKERS:-8}
PROCS=${PROCS:-1,2}
SESSIONS=${SESSIONS:-1}
TURNS=${TURNS:-200}
PGBENCH_CLIENTS=${PGBENCH_CLIENTS:-8}
PGBENCH_THREADS=${PGBENCH_THREADS:-2}
PGBENCH_SECS=${PGBENCH_SECS:-15}
PGBENCH_ROWS=${PGBENCH_ROWS:-200000}

# ---------------------------------------------------------------- 1. tools and build
for tool in cargo psql pgbench awk; do command -v "$tool" >/dev/null || die "$tool is required but not on PATH"; done
psql -d postgres -Atqc 'SELECT 1' >/dev/null || die "cannot reach Postgres at $PGUSER@$PGHOST:$PGPORT"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building cairn-bench and cairn-generator (release) into $CARGO_TARGET_DIR"
    (cd "$ROOT" && cargo build --release -p cairn-bench -p cairn-generator)
fi
BIN=$CARGO_TARGET_DIR/release
for b in cairn-generator generator_throughput prompt_tokens stop_lag; do
    [[ -x $BIN/$b ]] || die "no binary at $BIN/$b"
done

PGBENCH_DB=""
cleanup() {
    if [[ -n $PGBENCH_DB ]]; then
        psql -d postgres -q -c "DROP DATABASE IF EXISTS $PGBENCH_DB WITH (FORCE)" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- 2. throughput
log "generator_throughput: $JOBS jobs in $SESSIONS session(s), $WORKERS workers per process, processes: $PROCS"
"$BIN/generator_throughput" --jobs "$JOBS" --workers "$WORKERS" --procs "$PROCS" --sessions "$SESSIONS" \
    >"$WORK/throughput.txt" 2>"$WORK/generator.log" ||
    { tail -20 "$WORK/generator.log" >&2; die "generator_throughput failed; see $WORK/generator.log"; }
cat "$WORK/throughput.txt" >&2

# ---------------------------------------------------------------- 3. pgbench floor
log "pgbench: preparing a database with $PGBENCH_ROWS due jobs"
read -r PGBENCH_URL TEAM_ID PROJECT_ID < <("$BIN/generator_throughput" --prepare-pgbench-db 2>>"$WORK/generator.log")
[[ -n ${PROJECT_ID:-} ]] || die "generator_throughput --prepare-pgbench-db printed no database"
PGBENCH_DB=${PGBENCH_URL##*/}
psql -q -v ON_ERROR_STOP=1 -v team_id="$TEAM_ID" -v project_id="$PROJECT_ID" -v rows="$PGBENCH_ROWS" \
    -f "$BENCH_DIR/pgbench_claim_complete_seed.sql" "$PGBENCH_URL" >/dev/null
log "pgbench: ${PGBENCH_SECS}s at -c$PGBENCH_CLIENTS -j$PGBENCH_THREADS"
pgbench -n -M prepared -c "$PGBENCH_CLIENTS" -j "$PGBENCH_THREADS" -T "$PGBENCH_SECS" \
    -f "$BENCH_DIR/pgbench_claim_complete.sql" "$PGBENCH_URL" >"$WORK/pgbench.txt" 2>&1 ||
    { cat "$WORK/pgbench.txt" >&2; die "pgbench failed"; }
failed=$(awk -F'[ :]+' '/number of failed transactions/ { print $5 }' "$WORK/pgbench.txt")
((${failed:-0} == 0)) || { cat "$WORK/pgbench.txt" >&2; die "pgbench: $failed failed transactions"; }
PGB_TPS=$(awk '/^tps = / { printf "%.0f", $3; exit }' "$WORK/pgbench.txt")
PGB_AVG=$(awk '/^latency average = / { print $4 }' "$WORK/pgbench.txt")
# Every transaction must have completed the job it claimed (clients stopped mid-script may leave one each).
PGB_TX=$(awk '/number of transactions actually processed/ { print $NF }' "$WORK/pgbench.txt")
PGB_DONE=$(psql -Atqc "SELECT count(*) FROM generation_jobs WHERE status = 'completed'" "$PGBENCH_URL")
((PGB_DONE >= PGB_TX && PGB_DONE <= PGB_TX + PGBENCH_CLIENTS)) ||
    die "pgbench processed $PGB_TX transactions but $PGB_DONE jobs are completed"
log "pgbench: the generator's own claim and completion statements (pgbench_job.sql)"
pgbench -n -M prepared -c "$PGBENCH_CLIENTS" -j "$PGBENCH_THREADS" -T "$PGBENCH_SECS" \
    -f "$BENCH_DIR/pgbench_job.sql" "$PGBENCH_URL" >"$WORK/pgbench_job.txt" 2>&1 ||
    { cat "$WORK/pgbench_job.txt" >&2; die "pgbench (pgbench_job.sql) failed"; }
PGB_JOB_TPS=$(awk '/^tps = / { printf "%.0f", $3; exit }' "$WORK/pgbench_job.txt")
cleanup
PGBENCH_DB=""
log "  pgbench: $PGB_TPS tps, avg $PGB_AVG ms"

# ---------------------------------------------------------------- 4. prompt tokens
log "prompt_tokens"
"$BIN/prompt_tokens" --jsonl "$WORK/session.jsonl" >"$WORK/prompt_tokens.txt" ||
    die "prompt_tokens failed"

# ---------------------------------------------------------------- 5. Stop lag
log "stop_lag: $TURNS turns"
"$BIN/stop_lag" --turns "$TURNS" >"$WORK/stop_lag.txt" 2>>"$WORK/generator.log" ||
    { tail -20 "$WORK/generator.log" >&2; die "stop_lag failed; see $WORK/generator.log"; }

# ---------------------------------------------------------------- 6. report
P=$(grep '^prompt_tokens ' "$WORK/prompt_tokens.txt")
S=$(grep '^stop_lag ' "$WORK/stop_lag.txt")
row() { printf '%-54s %s\n' "$1" "$2"; }
processes() { if [[ $1 == 1 ]]; then echo "1 process"; else echo "$1 processes"; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
WARNINGS=$(sed 's/\x1b\[[0-9;]*m//g' "$WORK/generator.log" | grep -cE '(WARN|ERROR) ' || true)
{
    echo "Cairn generator benchmark, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "git $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && [[ -n $(git status --porcelain 2>/dev/null) ]] && echo ' (dirty tree)'), $(nproc) CPUs shared by generators, API, Postgres and the bench (and any other work on the box), $(psql -d postgres -Atqc 'SHOW server_version')"
    echo "heuristic provider (offline, no model), $JOBS seeded jobs per run in $SESSIONS session(s), CAIRN_WORKERS=$WORKERS, CAIRN_SWEEP_MS=250"
    echo
    while read -r T; do
        row "generator jobs/s, $(processes "$(kv "$T" procs)")" \
            "$(kv "$T" jobs_per_s)   (claim->complete p50 $(kv "$T" p50_ms) ms, p99 $(kv "$T" p99_ms) ms; $(kv "$T" completed) completed, $(kv "$T" failed) failed)"
    done <"$WORK/throughput.txt"
    row "pgbench claim + complete tx/s (-c$PGBENCH_CLIENTS -j$PGBENCH_THREADS, ${PGBENCH_SECS}s)" \
        "$PGB_TPS   (avg $PGB_AVG ms; $PGBENCH_ROWS-job backlog)"
    while read -r T; do
        row "  generator / pgbench, $(processes "$(kv "$T" procs)")" "$(ratio "$(kv "$T" jobs_per_s)" "$PGB_TPS")"
    done <"$WORK/throughput.txt"
    row "pgbench the generator's claim + completion tx/s (pgbench_job.sql)" "$PGB_JOB_TPS   (one observation written per job)"
    while read -r T; do
        row "  generator / pgbench_job, $(processes "$(kv "$T" procs)")" "$(ratio "$(kv "$T" jobs_per_s)" "$PGB_JOB_TPS")"
    done <"$WORK/throughput.txt"
    row "input tokens per 100 tool events, coalesced (Cairn)" "$(kv "$P" coalesced_per_100)"
    row "input tokens per 100 tool events, one call per event" "$(kv "$P" per_event_per_100)"
    row "  per event / coalesced" \
        "$(kv "$P" ratio)   (observation calls only $(kv "$P" obs_only_ratio); user part only $(kv "$P" user_part_ratio))"
    row "  coalesced tokens in the cacheable system prefix" \
        "$(kv "$P" coalesced_system) of $(kv "$P" coalesced) ($(kv "$P" coalesced_system_pct)%)"
    row "Stop -> turn summary visible, ms ($(kv "$S" turns) turns)" \
        "p50 $(kv "$S" p50_ms)  p90 $(kv "$S" p90_ms)  p99 $(kv "$S" p99_ms)  max $(kv "$S" max_ms)   (wake-up poll $(kv "$S" wakeup_poll_ms) ms, sweep $(kv "$S" sweep_ms) ms)"
    echo
    grep -v '^prompt_tokens ' "$WORK/prompt_tokens.txt"
    echo
    echo "generator warn/error log lines: $WARNINGS; raw output: ${WORK#"$ROOT"/}/"
} | tee "$REPORT"
log "report written to ${REPORT#"$ROOT"/}"
