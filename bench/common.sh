# Shared set-up of the bench scripts: paths, the shared cargo target, where
# cairn_testkit makes its databases, a Redis database of its own (so other
# generators on the same Redis, such as tests running alongside, cannot take
# a run's wake-ups), the run's output paths, and small helpers.
# Source it with the run's name: `source "$BENCH_DIR/common.sh" generator`.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH_DIR")
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
export CAIRN_TEST_DATABASE_URL=${CAIRN_TEST_DATABASE_URL:-postgres://$PGUSER@$PGHOST:$PGPORT/postgres}
export CAIRN_TEST_REDIS_URL=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/14}

STAMP=$(date +%Y%m%d-%H%M%S)
OUT_DIR=$BENCH_DIR/out
WORK=$OUT_DIR/$1-$STAMP.d
REPORT=$OUT_DIR/$1-$STAMP.txt
mkdir -p "$WORK"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
    printf '\nFAIL: %s\n' "$*" >&2
    exit 1
}
# kv <line> <key>: the value of key=value in a result line.
kv() { tr ' ' '\n' <<<"$1" | awk -v k="$2" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }'; }
