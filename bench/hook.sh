#!/usr/bin/env bash
# bench/hook.sh: how long one `cairn hook` call takes, as the agent sees it.
#
# Builds the cairn CLI and hook_latency in release mode and runs
# hook_latency (its //! doc says what it measures): the real API in-process
# over a fresh database, and the release `cairn hook claude-code` run as a
# child process one call at a time, timed from spawn to exit, with its peak
# RSS: PostToolUse, SessionStart and UserPromptSubmit with the server up,
# then PostToolUse with the server down (the spool path), first with an
# empty spool and then behind a backlog; /bin/true and `cairn --version`
# give the process-start floor of this machine. The database is dropped.
# The table is printed and written to bench/out/hook-<date>.txt; the raw
# output and the log go to bench/out/hook-<date>.d/. See bench/README.md.
#
# Needs: Postgres on 127.0.0.1:5432 (user postgres, trust auth), Redis on
# 127.0.0.1:6379, cargo, psql. Takes about a minute after the build.
#
# Knobs (environment): RUNS (1000: PostToolUse runs, server up and down),
# SESSION_START_RUNS (300), PROMPT_RUNS (300), BACKLOG_RUNS (200), WARMUP
# (10 unmeasured runs per scenario), CAIRN_BIN (the cairn binary to measure;
# default $CARGO_TARGET_DIR/release/cairn), SKIP_BUILD=1,
# PGHOST/PGPORT/PGUSER, BENCH_REDIS_URL (redis://127.0.0.1:6379/14).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" hook
RUNS=${RUNS:-1000}
SESSION_START_RUNS=${SESSION_START_RUNS:-300}
PROMPT_RUNS=${PROMPT_RUNS:-300}
BACKLOG_RUNS=${BACKLOG_RUNS:-200}
WARMUP=${WARMUP:-10}

# ---------------------------------------------------------------- 1. tools and build
for tool in cargo psql; do command -v "$tool" >/dev/null || die "$tool is required but not on PATH"; done
psql -d postgres -Atqc 'SELECT 1' >/dev/null || die "cannot reach Postgres at $PGUSER@$PGHOST:$PGPORT"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    log "building cairn and hook_latency (release) into $CARGO_TARGET_DIR"
    (cd "$ROOT" && cargo build --release -p cairn -p cairn-bench --bin cairn --bin hook_latency)
fi
BIN=$CARGO_TARGET_DIR/release/hook_latency
export CAIRN_BIN=${CAIRN_BIN:-$CARGO_TARGET_DIR/release/cairn}
[[ -x $BIN ]] || die "no binary at $BIN"
[[ -x $CAIRN_BIN ]] || die "no cairn binary at $CAIRN_BIN"

# ---------------------------------------------------------------- 2. runs
RAW=$WORK/hook_latency.txt
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ps -eo pid,pcpu,etime,comm --sort=-pcpu | head -12 >"$WORK/ps-before.txt"
log "hook_latency: $RUNS PostToolUse runs up and down, $SESSION_START_RUNS SessionStart, $PROMPT_RUNS UserPromptSubmit, $BACKLOG_RUNS behind a backlog; log in ${WORK#"$ROOT"/}/hook_latency.log"
# The scratch home, repository and spools stay in the run's directory, on
# the same disk as a real ~/.local/state (the spool fsyncs each event).
"$BIN" --runs "$RUNS" --session-start-runs "$SESSION_START_RUNS" --prompt-runs "$PROMPT_RUNS" \
    --backlog-runs "$BACKLOG_RUNS" --warmup "$WARMUP" --dir "$WORK/scratch" \
    2>"$WORK/hook_latency.log" | tee "$RAW" >&2 ||
    { tail -20 "$WORK/hook_latency.log" >&2; die "hook_latency failed; see ${WORK#"$ROOT"/}/hook_latency.log and $RAW"; }
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
# 1,000+ runs of spools and repository copies: only the report is worth keeping.
rm -rf "$WORK/scratch"

# ---------------------------------------------------------------- 3. report
{
    echo "Cairn hook client: wall time of one \`cairn hook claude-code\` call, spawn to exit, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "git $(cd "$ROOT" && git log -1 --oneline)$(cd "$ROOT" && [[ -n $(git status --porcelain -- crates/cli 2>/dev/null) ]] && echo ' (crates/cli has uncommitted changes)')"
    echo "cairn binary: $CAIRN_BIN ($(stat -c %s "$CAIRN_BIN" | awk '{ printf "%.1f MB", $1 / 1e6 }'), built $(date -r "$CAIRN_BIN" '+%Y-%m-%d %H:%M'))"
    echo "$(nproc) CPUs shared by the API (in-process), Postgres, the hook children and any other work on the box; $(uname -r)"
    echo "load average before: $LOAD_BEFORE, after: $LOAD_AFTER; filesystem of the spool: $(df -T "$WORK" | awk 'NR == 2 { print $2 }')"
    echo "one call at a time; wall = spawn to wait4, stdin written and closed, stdout read; cpu = the child's user + sys;"
    echo "peak MiB = the largest ru_maxrss of a run; load1 = 1-minute load average when the scenario started"
    sed -n '/^scenario /,$p' "$RAW"
    grep '^check ' "$RAW"
    echo "raw output and log: ${WORK#"$ROOT"/}/"
} | tee "$REPORT"
log "report written to ${REPORT#"$ROOT"/}"
