#!/usr/bin/env bash
# bench/memory.sh: how fast Cairn gives memory back, on a large corpus.
#
# Builds cairn-bench in release mode and runs memory_latency (its //! doc
# says what it measures): a fresh database with 1,000,000 generated
# observations in 50 projects (100,000 in project A), then SessionStart
# context and search latency (1-, 2- and 4-word queries) at p50/p90/p99 from
# a load generator at concurrency 8 against the API running in-process.
# Then bench/explain.sql runs EXPLAIN (ANALYZE, BUFFERS) of the main
# statements on that database, and the database is dropped.
# The table is printed and written to bench/out/memory-<date>.txt; the raw
# output, the plans (explain.txt) and the log go to bench/out/memory-<date>.d/.
# See bench/README.md.
#
# Needs: Postgres on 127.0.0.1:5432 (user postgres, trust auth), Redis on
# 127.0.0.1:6379, cargo, psql, awk. Takes about 10 minutes on 2 cores, most
# of it generating the corpus (~2 GB in Postgres while it runs).
#
# Knobs (environment): SECS (20 measured seconds per scenario), WARMUP_SECS
# (3), CONCURRENCY ("8,1": each scenario at 8, then at 1), QUERIES (100 per search scenario), OBS_TOTAL
# (1000000), OBS_A (100000), KEEP_DB=1 (leave the database; its URL is in the
# report), SKIP_BUILD=1, PGHOST/PGPORT/PGUSER, BENCH_REDIS_URL
# (redis://127.0.0.1:6379/14).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" memory
SECS=${SECS:-20}
WARMUP_SECS=${WARMUP_SECS:-3}
CONCURRENCY=${CONCURRENCY:-8,1}
QUERIES=${QUERIES:-100}
OBS_TOTAL=${OBS_TOTAL:-1000000}
OBS_A=${OBS_A:-100000}

# ---------------------------------------------------------------- 1. tools and build
for tool in cargo psql awk; do command -v "$tool" >/dev/null || die "$tool is required but not on PATH"; done
psql -d postgres -Atqc 'SELECT 1' >/dev/null || die "cannot reach Postgres at $PGUSER@$PGHOST:$PGPORT"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building cairn-bench (release) into $CARGO_TARGET_DIR"
    (cd "$ROOT" && cargo build --release -p cairn-bench --bin memory_latency)
fi
BIN=$CARGO_TARGET_DIR/release/memory_latency
[[ -x $BIN ]] || die "no binary at $BIN"

RAW=$WORK/memory_latency.txt
DB_URL=""
cleanup() {
    [[ -n $DB_URL ]] || DB_URL=$(awk '/^database url=/ { print substr($2, 5); exit }' "$RAW" 2>/dev/null || true)
    local name=${DB_URL##*/}
    if [[ $name == cairn_test_* && ${KEEP_DB:-0} != 1 ]]; then
        psql -d postgres -q -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- 2. corpus and load
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ps -eo pid,pcpu,etime,comm --sort=-pcpu | head -12 >"$WORK/ps-before.txt"
log "memory_latency: generating $OBS_TOTAL observations ($OBS_A in project A) - several minutes; log in ${WORK#"$ROOT"/}/memory_latency.log"
"$BIN" --obs-total "$OBS_TOTAL" --obs-a "$OBS_A" --queries "$QUERIES" --concurrency "$CONCURRENCY" \
    --warmup-secs "$WARMUP_SECS" --secs "$SECS" --psql-vars "$WORK/explain_vars.sql" --keep-db \
    2>"$WORK/memory_latency.log" | tee "$RAW" >&2 ||
    { tail -20 "$WORK/memory_latency.log" >&2; die "memory_latency failed; see $WORK/memory_latency.log"; }
DB_URL=$(awk '/^database url=/ { print substr($2, 5); exit }' "$RAW")
[[ -n $DB_URL ]] || die "memory_latency printed no database"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- 3. plans
log "EXPLAIN (ANALYZE, BUFFERS): bench/explain.sql"
psql -X -q -A -t -v ON_ERROR_STOP=1 -f "$WORK/explain_vars.sql" -f "$BENCH_DIR/explain.sql" "$DB_URL" \
    >"$WORK/explain.txt" 2>&1 || { tail -20 "$WORK/explain.txt" >&2; die "explain.sql failed"; }
# One line per plan: execution time, top node, and the scan that handled the most rows (rows x loops).
explain_summary() {
    awk '
        function flush() {
            if (label == "") return
            extra = (jit != "" ? ", JIT " jit " ms" : "") (generic ? ", generic plan" : "")
            printf "  %-72s %9s ms  %-24s %s%s\n", label, exec, top, (scan == "" ? "-" : scan " (" big ")"), extra
        }
        function node(line) {
            sub(/^ *(-> *)?/, "", line); sub(/  \(cost=.*/, "", line); return line
        }
        /^== / { flush(); label = substr($0, 4); exec = "?"; top = ""; scan = ""; big = -1; jit = ""; generic = 0; next }
        label != "" && top == "" && /\(cost=/ { top = node($0) }
        /Scan/ && /actual time=/ {
            rows = $0; sub(/.* rows=/, "", rows); sub(/ .*/, "", rows)
            loops = $0; sub(/.* loops=/, "", loops); sub(/\).*/, "", loops)
            if (rows * loops > big) { big = rows * loops; scan = node($0) }
        }
        /\$[0-9]/ { generic = 1 }
        /Timing: Generation/ { jit = $0; sub(/.*Total /, "", jit); sub(/ ms.*/, "", jit) }
        /^Execution Time:/ { exec = $3 }
        END { flush() }
    ' "$1"
}

# ---------------------------------------------------------------- 4. report
C=$(grep '^corpus ' "$RAW")
CTX=$(grep '^context ' "$RAW" || true)
setting() { psql -d postgres -Atqc "SHOW $1"; }
label() {
    case $1 in
        session_start) echo "SessionStart hook: store event + context (A)" ;;
        context) echo "GET /v1/projects/A/context (read only)" ;;
        search_1w) echo "GET /v1/search, 1 word (A)" ;;
        search_2w) echo "GET /v1/search, 2 words (A)" ;;
        search_4w) echo "GET /v1/search, 4 words (A)" ;;
        search_small_1w) echo "GET /v1/search, 1 word (~18k-obs project)" ;;
        *) echo "$1" ;;
    esac
}
{
    echo "Cairn memory given back: context and search latency, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "git $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && [[ -n $(git status --porcelain 2>/dev/null) ]] && echo ' (dirty tree)'), $(nproc) CPUs shared by Postgres, the API, the load generator (one process) and any other work on the box"
    echo "load average before: $LOAD_BEFORE, after: $LOAD_AFTER; $(psql -d postgres -Atqc 'SHOW server_version' | cut -d' ' -f1), shared_buffers=$(setting shared_buffers) work_mem=$(setting work_mem) effective_cache_size=$(setting effective_cache_size) jit=$(setting jit)"
    echo "API in-process (release), pool 32 connections; load: closed loop at concurrency $CONCURRENCY, one reqwest client, admin token, ${WARMUP_SECS}s warm-up + ${SECS}s per scenario"
    echo
    echo "corpus: $(kv "$C" observations) observations in $(kv "$C" projects) projects ($(kv "$C" project_a) in A), $(kv "$C" sessions) sessions, $(kv "$C" summaries) summaries; vocabulary $(kv "$C" vocabulary) words (Zipf), $(kv "$C" paths) paths"
    echo "  generated in $(kv "$C" generate_s) s (sessions $(kv "$C" sessions_s) s, observations $(kv "$C" observations_s) s on 2 connections, summaries $(kv "$C" summaries_s) s), VACUUM ANALYZE $(kv "$C" vacuum_s) s"
    echo "  sizes MB: database $(kv "$C" db_mb); observations $(kv "$C" observations_mb) total = table+TOAST $(kv "$C" observations_table_mb) + indexes $(kv "$C" observations_indexes_mb) (search GIN $(kv "$C" search_idx_mb)); summaries $(kv "$C" summaries_mb); sessions $(kv "$C" sessions_mb)"
    [[ -z $CTX ]] || echo "  SessionStart context: $(kv "$CTX" session_start_chars) characters of markdown"
    echo
    printf '%-46s %4s %8s %6s %8s %8s %8s %8s %8s  %s\n' scenario conc requests 'req/s' 'p50 ms' 'p90 ms' 'p99 ms' 'max ms' 'aim p99' \
        'meets  CPU % of 2 cores: busy = bench + postgres + other'
    grep '^latency ' "$RAW" | while read -r L; do
        S=$(kv "$L" scenario) N=$(kv "$L" concurrency)
        printf '%-46s %4s %8s %6s %8s %8s %8s %8s %8s  %-5s  %s = %s + %s + %s\n' "$(label "$S")" "$N" "$(kv "$L" requests)" "$(kv "$L" rps)" \
            "$(kv "$L" p50_ms)" "$(kv "$L" p90_ms)" "$(kv "$L" p99_ms)" "$(kv "$L" max_ms)" "< $(kv "$L" aim_p99_ms)" "$(kv "$L" meets)" \
            "$(kv "$L" cpu_busy_pct)" "$(kv "$L" cpu_bench_pct)" "$(kv "$L" cpu_postgres_pct)" "$(kv "$L" cpu_other_pct)"
        { grep "^latency_class scenario=$S concurrency=$N " "$RAW" || true; } | while read -r K; do
            printf '%-46s %4s %8s %6s %8s %8s %8s %8s\n' "$(if [[ $(kv "$K" class) == frequent ]]; then echo '  queries with a frequent word'; else echo '  queries of rare words only'; fi)" "" "$(kv "$K" requests)" "" \
                "$(kv "$K" p50_ms)" "" "$(kv "$K" p99_ms)" "$(kv "$K" max_ms)"
        done
    done
    echo
    echo "rows matched per query (the search's text condition, in the scenario's project):"
    grep '^matches ' "$RAW" | while read -r M; do
        printf '  %-18s %s queries (%s with a frequent word): median %s, p90 %s, max %s, %s match nothing\n' \
            "$(kv "$M" scenario)" "$(kv "$M" queries)" "$(kv "$M" with_frequent)" "$(kv "$M" median)" \
            "$(kv "$M" p90)" "$(kv "$M" max)" "$(kv "$M" zero)"
    done
    echo
    echo "EXPLAIN (ANALYZE, BUFFERS), bench/explain.sql on this database after the load:"
    printf '  %-72s %12s  %-24s %s\n' statement execution 'top node' 'scan with the most rows (rows x loops)'
    explain_summary "$WORK/explain.txt"
    echo
    if [[ ${KEEP_DB:-0} == 1 ]]; then echo "database kept: $DB_URL"; fi
    echo "raw output, plans and log: ${WORK#"$ROOT"/}/"
} | tee "$REPORT"
log "report written to ${REPORT#"$ROOT"/}"
