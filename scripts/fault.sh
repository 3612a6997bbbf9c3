#!/usr/bin/env bash
# The fault suite (crates/fault): the real cairn-api and cairn-generator on a
# private Postgres and Redis, killed, restarted and cut off under load. Prints
# one table per scenario and appends them to bench/out/fault.md.
# Load sizes: CAIRN_FAULT_EVENTS, CAIRN_FAULT_CLIENTS, ... (crates/fault/README.md).
# Extra arguments pick scenarios, e.g. scripts/fault.sh postgres
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
cargo build -p cairn-api -p cairn-generator --bins
exec cargo test -p cairn-fault -- --nocapture --test-threads=1 "$@"
