#!/usr/bin/env bash
# bench/ingest.sh: measures Cairn's ingest hot path and prints figures.
#
# Drives POST /v1/hooks/claude-code of a release cairn-api with wrk (~2 KB
# Claude Code PostToolUse hooks, unique tool_use_id per request, 64 sessions)
# at concurrency 8 and 32, reports events/s, p50 and p99; then runs the
# equivalent bare transaction (insert outbox row + insert event row) with
# pgbench on the same Postgres as the floor to compare against; and reads the
# API's resident memory idle and under load. The table is printed and written
# to bench/out/ingest-<date>.txt. See bench/README.md.
#
# Needs: Postgres on 127.0.0.1:5432 (user postgres, trust auth), Redis on
# 127.0.0.1:6379, cargo, curl, psql, pgbench, wrk (installed with apt-get if
# missing). The database cairn_bench is dropped and recreated.
#
# Knobs (environment): WARMUP_SECS (10), DURATION_SECS (20), CONCURRENCY
# ("8 32"), THREADS (2), SESSIONS (64; 1 puts every event in one turn), BENCH_PORT (first free port from 18080),
# SKIP_BUILD=1, TELEMETRY=on (the API with /metrics on a port of its own and
# OpenTelemetry traces exported to bench/otlp_sink.py, to measure their
# cost against a run without), BENCH_API_BIN (another cairn-api build, e.g. an older
# commit's, to compare), PGHOST/PGPORT/PGUSER, BENCH_DB (cairn_bench),
# BENCH_REDIS_URL (redis://127.0.0.1:6379).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
DB=${BENCH_DB:-cairn_bench}
REDIS_URL=${BENCH_REDIS_URL:-redis://127.0.0.1:6379}
WARMUP_SECS=${WARMUP_SECS:-10}
DURATION_SECS=${DURATION_SECS:-20}
CONCURRENCY=${CONCURRENCY:-"8 32"}
THREADS=${THREADS:-2}
export SESSIONS=${SESSIONS:-64} # sessions the events spread over (ingest.lua reads it); 1: every event joins one turn

STAMP=$(date +%Y%m%d-%H%M%S)
OUT_DIR=$BENCH_DIR/out
WORK=$OUT_DIR/ingest-$STAMP.d # raw wrk/pgbench output and the API log
REPORT=$OUT_DIR/ingest-$STAMP.txt
mkdir -p "$WORK"
API_LOG=$WORK/api.log

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
    printf '\nFAIL: %s\n' "$*" >&2
    exit 1
}

# ---------------------------------------------------------------- 1. tools
need() { command -v "$1" >/dev/null || die "$1 is required but not on PATH"; }
if ! command -v wrk >/dev/null; then
    log "installing wrk"
    SUDO=""
    [[ $(id -u) -eq 0 ]] || SUDO=sudo
    $SUDO apt-get install -y wrk >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y wrk >/dev/null; }
fi
for tool in wrk pgbench psql curl cargo awk sort; do need "$tool"; done
psql -d postgres -Atqc 'SELECT 1' >/dev/null || die "cannot reach Postgres at $PGUSER@$PGHOST:$PGPORT"

# ---------------------------------------------------------------- 2. build
BIN=${BENCH_API_BIN:-$CARGO_TARGET_DIR/release/cairn-api}
if [[ ${SKIP_BUILD:-0} != 1 && -z ${BENCH_API_BIN:-} ]]; then
    log "building cairn-api (release) into $CARGO_TARGET_DIR"
    (cd "$ROOT" && cargo build --release -p cairn-api)
fi
[[ -x $BIN ]] || die "no binary at $BIN"

# ---------------------------------------------------------------- 3. database + API
log "recreating database $DB"
psql -d postgres -v ON_ERROR_STOP=1 -q \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
    -c "CREATE DATABASE $DB"

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=${BENCH_PORT:-18080}
if [[ -z ${BENCH_PORT:-} ]]; then
    while port_in_use "$PORT"; do PORT=$((PORT + 1)); done
elif port_in_use "$PORT"; then
    die "port $PORT is already in use"
fi
BASE=http://127.0.0.1:$PORT

API_PID=""
SINK_PID=""
if [[ ${TELEMETRY:-off} == on ]]; then
    SINK_PORT=$((PORT + 100))
    SINK_COUNT=$(mktemp)
    python3 "$BENCH_DIR/otlp_sink.py" "$SINK_PORT" "$SINK_COUNT" &
    SINK_PID=$!
    export CAIRN_METRICS_ADDR=127.0.0.1:$((PORT + 101))
    export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$SINK_PORT
    log "telemetry on: /metrics on $CAIRN_METRICS_ADDR, traces to $OTEL_EXPORTER_OTLP_ENDPOINT"
else
    unset CAIRN_METRICS_ADDR OTEL_EXPORTER_OTLP_ENDPOINT
fi
cleanup() {
    [[ -n $SINK_PID ]] && kill "$SINK_PID" 2>/dev/null || true
    if [[ -n $API_PID ]] && kill -0 "$API_PID" 2>/dev/null; then
        kill "$API_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$API_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$API_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting cairn-api on $BASE (log: $API_LOG)"
CAIRN_DATABASE_URL=postgres://$PGUSER@$PGHOST:$PGPORT/$DB \
    CAIRN_REDIS_URL=$REDIS_URL \
    CAIRN_JWT_SECRET=bench-only-secret-0123456789abcdef0123456789abcdef \
    CAIRN_LISTEN_ADDR=127.0.0.1:$PORT \
    CAIRN_DATABASE_MAX_CONNECTIONS=40 \
    CAIRN_RATE_LIMIT_PER_TOKEN=1000000 CAIRN_RATE_LIMIT_PER_TOKEN_BURST=1000000 \
    CAIRN_RATE_LIMIT_PER_IP=1000000 CAIRN_RATE_LIMIT_PER_IP_BURST=1000000 \
    RUST_LOG=warn \
    "$BIN" >"$API_LOG" 2>&1 &
API_PID=$!

for i in $(seq 600); do
    kill -0 "$API_PID" 2>/dev/null || { cat "$API_LOG" >&2; die "cairn-api exited during start-up"; }
    [[ $(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz" || true) == 200 ]] && break
    [[ $i == 600 ]] && die "cairn-api did not answer /healthz within 60 s"
    sleep 0.1
done

# The bootstrap banner: the token is on the line after "ingest token".
TOKEN=$(awk '/ingest token/ { if ((getline line) > 0) { gsub(/[[:space:]]/, "", line); print line }; exit }' "$API_LOG")
[[ -n $TOKEN ]] || { cat "$API_LOG" >&2; die "no ingest token in the bootstrap banner (is $DB really empty?)"; }

rss_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$API_PID/status"; }
# CPU time (user + system) the API has used so far, in clock ticks.
CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$API_PID/stat"; }
RSS_IDLE=$(rss_kb VmRSS)
log "API up (pid $API_PID), idle RSS ${RSS_IDLE} kB"

# One request by hand, so an API-side problem shows its error body here
# rather than as a wall of non-2xx in wrk.
URL=$BASE/v1/hooks/claude-code
probe=$(curl -s -w '\n%{http_code}' -X POST "$URL" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data '{"session_id":"bench-probe","cwd":"/home/dev/app","hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"toolu_probe","tool_input":{"file_path":"src/main.rs"},"tool_response":{"content":"fn main() {}"}}')
[[ ${probe##*$'\n'} == 2?? ]] || die "probe request answered ${probe##*$'\n'}: ${probe%$'\n'*}"

# ---------------------------------------------------------------- 4. wrk
# run_wrk <label> <connections> <seconds>:
# prints "requests non2xx p50_us p99_us events_per_s api_cpu_us_per_event"
run_wrk() {
    local label=$1 conns=$2 secs=$3 out=$WORK/wrk-$1.txt cpu0 cpu1
    cpu0=$(cpu_ticks)
    wrk -t"$THREADS" -c"$conns" -d"${secs}s" --timeout 10s --latency \
        -s "$BENCH_DIR/ingest.lua" -H "Authorization: Bearer $TOKEN" "$URL" \
        -- "$label-$STAMP" "$BENCH_DIR/tool_response.txt" >"$out" 2>&1 ||
        { cat "$out" >&2; die "wrk failed ($label)"; }
    cpu1=$(cpu_ticks)
    local result
    result=$(grep '^WRK_RESULT' "$out") || { cat "$out" >&2; die "no WRK_RESULT line from wrk ($label)"; }
    # Turn "k=v k=v" into shell variables w_k.
    local kv w_requests w_duration_us w_non2xx w_status_errors w_connect_errors w_read_errors \
        w_write_errors w_timeouts w_p50_us w_p99_us
    for kv in ${result#WRK_RESULT }; do
        case ${kv%%=*} in
        requests | duration_us | non2xx | status_errors | connect_errors | read_errors | write_errors | timeouts | p50_us | p99_us)
            printf -v "w_${kv%%=*}" '%s' "${kv#*=}" ;;
        esac
    done
    local wrk_non2xx
    wrk_non2xx=$(awk '/Non-2xx or 3xx responses/ { print $NF }' "$out")
    if ((w_non2xx > 0 || ${wrk_non2xx:-0} > 0 || w_status_errors > 0)); then
        cat "$out" >&2
        die "$label: $((w_non2xx > ${wrk_non2xx:-0} ? w_non2xx : ${wrk_non2xx:-0})) non-2xx responses of $w_requests; see $out and $API_LOG"
    fi
    if ((w_connect_errors + w_read_errors + w_write_errors + w_timeouts > 0)); then
        cat "$out" >&2
        die "$label: socket errors (connect $w_connect_errors, read $w_read_errors, write $w_write_errors, timeout $w_timeouts)"
    fi
    echo "$w_requests $w_non2xx $w_p50_us $w_p99_us" \
        "$(awk -v r="$w_requests" -v d="$w_duration_us" 'BEGIN { printf "%.0f", r / (d / 1e6) }')" \
        "$(awk -v t=$((cpu1 - cpu0)) -v hz="$CLK_TCK" -v r="$w_requests" 'BEGIN { printf "%.0f", (r > 0 ? t / hz * 1e6 / r : 0) }')"
}

log "wrk warm-up: ${WARMUP_SECS}s at -t$THREADS -c32 (discarded)"
run_wrk warmup 32 "$WARMUP_SECS" >/dev/null
declare -A C_EPS C_P50 C_P99 C_CPU
for c in $CONCURRENCY; do
    log "wrk: ${DURATION_SECS}s at -t$THREADS -c$c"
    res=$(run_wrk "c$c" "$c" "$DURATION_SECS")
    read -r _ _ p50 p99 eps cpu <<<"$res"
    C_EPS[$c]=$eps C_P50[$c]=$p50 C_P99[$c]=$p99 C_CPU[$c]=$cpu
    log "  cairn c$c: $eps events/s, p50 ${p50} us, p99 ${p99} us, API CPU ${cpu} us/event"
done

# ---------------------------------------------------------------- 6. memory under load
RSS_LOAD=$(rss_kb VmRSS)
RSS_PEAK=$(rss_kb VmHWM)
kill -0 "$API_PID" 2>/dev/null || die "cairn-api died during the run; see $API_LOG"

# Every accepted request must have stored one event: a deduplicated or
# skipped event also answers 200, and would make the figures meaningless.
# wrk does not count the requests in flight when a run ends, which the API may
# still store, so up to one extra event per connection and run is fine.
sleep 1
STORED=$(psql -d "$DB" -Atqc "SELECT count(*) FROM agent_events WHERE source_adapter = 'claude-code'")
JOBS=$(psql -d "$DB" -Atqc "SELECT count(*) FROM generation_jobs")
# A request cancelled by a client disconnect must not leave its pooled
# connection inside a transaction; wrk disconnects at the end of every run.
IDLE_IN_TX=$(psql -d postgres -Atqc "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB' AND state LIKE 'idle in transaction%'")
TOTAL_OK=$((1 + $(awk '/^WRK_RESULT/ { for (i = 2; i <= NF; i++) if (sub(/^requests=/, "", $i)) s += $i } END { print s + 0 }' "$WORK"/wrk-*.txt)))
MAX_IN_FLIGHT=32
for c in $CONCURRENCY; do MAX_IN_FLIGHT=$((MAX_IN_FLIGHT + c)); done
((STORED >= TOTAL_OK && STORED <= TOTAL_OK + MAX_IN_FLIGHT)) ||
    die "wrk got $TOTAL_OK 2xx answers (probe included) but $STORED events are stored"

# ---------------------------------------------------------------- 5. pgbench baseline
read -r TEAM_ID PROJECT_ID < <(psql -d "$DB" -Atq -F ' ' -c "SELECT team_id, id FROM projects ORDER BY created_at LIMIT 1")
[[ -n ${PROJECT_ID:-} ]] || die "no project in $DB"
# The payload Cairn actually stored for one of the wrk requests: same bytes, same JSONB.
PAYLOAD=$(psql -d "$DB" -Atqc "SELECT payload::text FROM agent_events WHERE session_id IS NOT NULL AND tool_name = 'Read' AND payload->>'session_id' LIKE 'bench-session-%' LIMIT 1")
[[ -n $PAYLOAD ]] || die "no stored bench event to take the payload from"

declare -A P_TPS P_AVG P_P50 P_P99
for c in $CONCURRENCY; do
    log "pgbench: ${DURATION_SECS}s at -c$c -j$THREADS"
    out=$WORK/pgbench-c$c.txt
    rm -f "$WORK/pgblog-c$c".*
    # -j cannot exceed -c.
    (cd "$WORK" && pgbench -n -M prepared -f "$BENCH_DIR/pgbench_ingest.sql" \
        -c "$c" -j "$((THREADS < c ? THREADS : c))" -T "$DURATION_SECS" \
        --log --log-prefix="pgblog-c$c" \
        -D team_id="$TEAM_ID" -D project_id="$PROJECT_ID" -D run="c$c-$STAMP" -D n=0 \
        -D payload="$PAYLOAD" "$DB") >"$out" 2>&1 ||
        { cat "$out" >&2; die "pgbench failed (c$c)"; }
    failed=$(awk -F'[ :]+' '/number of failed transactions/ { print $5 }' "$out")
    ((${failed:-0} == 0)) || { cat "$out" >&2; die "pgbench c$c: $failed failed transactions"; }
    P_TPS[$c]=$(awk '/^tps = / { printf "%.0f", $3; exit }' "$out")
    P_AVG[$c]=$(awk '/^latency average = / { printf "%.0f", $4 * 1000 }' "$out") # ms -> us
    # Per-transaction log: "client_id transaction_no time_us script_no epoch epoch_us".
    read -r P_P50[$c] P_P99[$c] < <(cat "$WORK/pgblog-c$c".* | awk '{ print $3 }' | sort -n |
        awk '{ v[NR] = $1 } END { if (NR == 0) { print "0 0"; exit }
              i50 = int(NR * 0.50 + 0.999999); i99 = int(NR * 0.99 + 0.999999); print v[i50], v[i99] }')
    log "  pgbench c$c: ${P_TPS[$c]} tps, avg ${P_AVG[$c]} us, p50 ${P_P50[$c]} us, p99 ${P_P99[$c]} us"
done

# ---------------------------------------------------------------- 7. report
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
strip_ansi() { sed 's/\x1b\[[0-9;]*m//g' "$@"; }
API_WARN=$(strip_ansi "$API_LOG" | grep -cE '^[^ ]+ +(WARN|ERROR) ' || true)
{
    echo "Cairn ingest benchmark, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "git $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && [[ -n $(git status --porcelain 2>/dev/null) ]] && echo ' (dirty tree)'), $(nproc) CPUs shared by API + Postgres + load generator, $(psql -d postgres -Atqc 'SHOW server_version')"
    echo "POST /v1/hooks/claude-code, PostToolUse ~$(( $(printf '%s' "$PAYLOAD" | wc -c) / 100 * 100 )) B, $SESSIONS sessions, wrk -t$THREADS, ${DURATION_SECS}s per row after ${WARMUP_SECS}s warm-up"
    echo "pgbench: BEGIN; INSERT generation_jobs; INSERT agent_events (same payload); COMMIT  (-M prepared, -j$THREADS)"
    echo
    printf '%-5s | %12s %10s %10s | %12s %10s %10s %10s | %7s\n' \
        conc "cairn ev/s" "p50 ms" "p99 ms" "pgbench tps" "avg ms" "p50 ms" "p99 ms" "ratio"
    printf '%s\n' "------+-----------------------------------+---------------------------------------------+--------"
    for c in $CONCURRENCY; do
        printf '%-5s | %12s %10s %10s | %12s %10s %10s %10s | %7s\n' "$c" \
            "${C_EPS[$c]}" "$(ms "${C_P50[$c]}")" "$(ms "${C_P99[$c]}")" \
            "${P_TPS[$c]}" "$(ms "${P_AVG[$c]}")" "$(ms "${P_P50[$c]}")" "$(ms "${P_P99[$c]}")" \
            "$(awk -v a="${C_EPS[$c]}" -v b="${P_TPS[$c]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
    done
    echo "(ratio = cairn events/s / pgbench tps)"
    echo
    printf 'cairn-api CPU per event:'
    for c in $CONCURRENCY; do printf ' c%s %s us' "$c" "${C_CPU[$c]}"; done
    echo
    echo "cairn-api RSS: idle $(mib "$RSS_IDLE"); after c$(echo $CONCURRENCY | awk '{ print $NF }') run $(mib "$RSS_LOAD"), peak (VmHWM) $(mib "$RSS_PEAK")"
    echo "events stored: $STORED (2xx answers: $TOTAL_OK), generation jobs: $JOBS, API warn/error log lines: $API_WARN"
    echo "API connections left idle in transaction after the wrk runs: $IDLE_IN_TX"
    if [[ -n $SINK_PID ]]; then
        sleep 6  # the exporter's batch interval (5 s), so the last spans arrive
        read -r SINK_REQ SINK_BYTES <"$SINK_COUNT" 2>/dev/null || true
        echo "telemetry on: OTLP batches received ${SINK_REQ:-0} (${SINK_BYTES:-0} bytes); /metrics ingest series: $(curl -s "http://$CAIRN_METRICS_ADDR/metrics" | grep -c '^cairn_ingest_events_total')"
    else
        echo "telemetry off (no /metrics listener, no trace export)"
    fi
    echo "raw output: ${WORK#"$ROOT"/}/"
    if ((API_WARN > 0)); then
        echo
        echo "API warnings/errors by message (full log: ${API_LOG#"$ROOT"/}):"
        strip_ansi "$API_LOG" | grep -E '^[^ ]+ +(WARN|ERROR) ' | sed -E 's/^[^ ]+ +//' |
            sort | uniq -c | sort -rn | head -20
    fi
} | tee "$REPORT"
log "report written to ${REPORT#"$ROOT"/}"
