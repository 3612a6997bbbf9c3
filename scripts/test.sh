#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: services, formatting, lints, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_services
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"

# A shared target directory grows with every build; when its disk is short
# of room, drop what is cheapest to rebuild (incremental state) first.
mkdir -p "$CARGO_TARGET_DIR"
free_kb=$(df -Pk "$CARGO_TARGET_DIR" | awk 'NR == 2 { print $4 }')
if (( free_kb < 15 * 1024 * 1024 )); then
    echo "less than 15 GB free beside $CARGO_TARGET_DIR: removing its incremental build state" >&2
    rm -rf "$CARGO_TARGET_DIR"/debug/incremental "$CARGO_TARGET_DIR"/release/incremental
fi
# One build of the workspace links ~80 test and bench executables of up to
# 0.2 GB each (line tables only; 0.5 GB with full debug info), and a checkout
# at another path links its own set beside the others.
# Short of 30 GB, drop the linked executables (libraries and dependencies
# stay): relinking takes minutes, a full disk fails the run.
free_kb=$(df -Pk "$CARGO_TARGET_DIR" | awk 'NR == 2 { print $4 }')
if (( free_kb < 30 * 1024 * 1024 )) && [[ -d $CARGO_TARGET_DIR/debug/deps ]]; then
    echo "less than 30 GB free beside $CARGO_TARGET_DIR: removing its linked test and bench executables" >&2
    find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f -perm -u+x ! -name '*.*' -delete
fi
export CAIRN_TEST_DATABASE_URL="${CAIRN_TEST_DATABASE_URL:-$CAIRN_PG_ADMIN_URL}"

# Each test makes a database of its own (~300 in a run, ~5 GB) and leaves
# it: they are dropped before the run (an earlier run's) and after it
# (one still in use, by a bench say, is left alone).
drop_test_databases() {
    psql "$CAIRN_TEST_DATABASE_URL" -Atqc "SELECT datname FROM pg_database d WHERE datname LIKE 'cairn_test_%'
        AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)" |
        while read -r db; do psql "$CAIRN_TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS \"$db\"" || true; done
}
drop_test_databases
trap drop_test_databases EXIT

# The real agent CLIs the end-to-end hook tests drive (npm; Node from apt when missing).
if ! command -v npm >/dev/null 2>&1; then
    echo "installing nodejs and npm with apt" >&2
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq nodejs npm >/dev/null
fi
scripts/agents.sh >/dev/null
scripts/fetch-model.sh  # the embedding model the embed, search and generator tests load
# Tools the contract tests drive (a browser, OpenAPI linters and generators):
# each script installs one when it is missing and prints nothing else.
for tool in scripts/tools/*.sh; do
    [[ -e $tool ]] && bash "$tool"
done

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
# Every test binary runs, whatever fails first; cargo lists each failure at the end.
cargo test --workspace --no-fail-fast
