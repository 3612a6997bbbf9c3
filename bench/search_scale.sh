#!/usr/bin/env bash
# bench/search_scale.sh: search latency at scale, at the SQL level.
#
# Seeds a throwaway database (every migration, then bench/search_scale_seed.sql:
# OBS_TOTAL = 1,000,000 observations in 50 projects, OBS_A = 100,000 in
# project A; ~2-4 minutes on 2 cores), then times the search statement of
# services/api/src/search/sql.rs (no filter, summaries included, a page of 20:
# 21 rows fetched) for 1-, 2- and 4-word queries on project A with pgbench at
# concurrency CONCURRENCY (8) for SECS (20) each, with the text as a literal
# (a custom plan, as the API's unprepared statement gets). Variants
# (bench/search_scale_*.sql):
#   before  the statement before OR search: websearch_to_tsquery of the text as
#           typed (every word required), the 1,000 newest matches ranked
#   or      the OR query (any word) ranked the same way
#   window  the OR query, the 200 newest matches looked for in the last 14
#           days first (the statement before the rings of days and weeks)
#   after   the OR query as search/sql.rs runs it now (written from the code
#           by a test of search/sql.rs; rings of days and weeks), prepared,
#           the text a bound parameter, as the API sends a search for words
#           alone: Postgres moves to a generic plan after five custom ones
#   custom  the same statement with the text as a literal: planned with its
#           values every time (the API's filtered searches)
# Then EXPLAIN (ANALYZE, BUFFERS) of each variant for the query of each size
# with the most matches. p50/p99 come from pgbench's per-transaction log.
# Output: bench/out/search_scale-<date>.txt (table) and .d/ (logs, plans).
#
# Knobs: OBS_TOTAL, OBS_A, SECS, CONCURRENCY, VARIANTS ("before or after"),
# DB (reuse a seeded database: skip creating and seeding), KEEP_DB=1.
# Needs psql and pgbench; Postgres on 127.0.0.1:5432 (user postgres, trust).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh" search_scale
OBS_TOTAL=${OBS_TOTAL:-1000000}
OBS_A=${OBS_A:-100000}
SECS=${SECS:-20}
CONCURRENCY=${CONCURRENCY:-8}
VARIANTS=${VARIANTS:-before or after}
for tool in psql pgbench awk sort; do command -v "$tool" >/dev/null || die "$tool is required"; done

if [[ -z ${DB:-} ]]; then
    DB=cairn_search_scale_$$
    cleanup() { [[ ${KEEP_DB:-0} == 1 ]] || psql -d postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" 2>/dev/null || true; }
    trap cleanup EXIT
    psql -d postgres -qc "CREATE DATABASE $DB"
    log "database $DB: migrations"
    for m in "$ROOT"/migrations/*.sql; do psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$m" >/dev/null; done
    log "seeding $OBS_TOTAL observations ($OBS_A in project A)"
    started=$(date +%s)
    psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$BENCH_DIR/search_scale_seed.sql" >/dev/null
    batch=100000
    per_a=$((OBS_TOTAL / OBS_A))
    for ((lo = 1; lo <= OBS_TOTAL; lo += 2 * batch)); do
        for w in 0 1; do
            l=$((lo + w * batch)); h=$((l + batch - 1)); ((h > OBS_TOTAL)) && h=$OBS_TOTAL
            ((l <= OBS_TOTAL)) && psql -X -q -v ON_ERROR_STOP=1 -d "$DB" \
                -c "SELECT seed.batch($l, $h, $OBS_TOTAL, $per_a)" >/dev/null &
        done
        wait
        log "  rows up to $((lo + 2 * batch - 1)) after $(($(date +%s) - started)) s"
    done
    psql -X -q -d "$DB" -c "DROP SCHEMA seed CASCADE" -c "VACUUM ANALYZE" >/dev/null
    log "seeded in $(($(date +%s) - started)) s"
else
    log "reusing database $DB"
fi

# 100 queries of each size: each word half the time one of the 100 most
# common, else a rarer one (as memory_latency picks them); fixed by setseed.
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" >/dev/null <<'SQL'
DROP TABLE IF EXISTS bench_queries;
SELECT setseed(0.17);
CREATE TABLE bench_queries AS
SELECT n AS words, i, string_agg(w, ' ') AS q_typed, string_agg(w, ' or ') AS q_any
FROM (SELECT n, i, k, 'w' || CASE WHEN random() < 0.5 THEN 1 + (random() * 99)::int
                                 ELSE 101 + (random() * 2899)::int END AS w
      FROM unnest(ARRAY[1, 2, 4]) n, generate_series(1, 100) i, LATERAL generate_series(1, n) k) x
GROUP BY n, i;
SQL
psql -X -Atq -d "$DB" -c "SELECT count(*), pg_size_pretty(pg_total_relation_size('observations')) FROM observations" \
    -c "SELECT count(*) FROM observations WHERE project_id = '00000000-0000-4000-8000-000000000000'" >"$WORK/corpus.txt"

{
    echo "search at scale: $(head -1 "$WORK/corpus.txt") observations, $(sed -n 2p "$WORK/corpus.txt") in project A;" \
        "concurrency $CONCURRENCY, ${SECS}s per row; $(nproc) cores; load before $(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-8s %-6s %8s %8s %8s %8s\n' variant words tx p50_ms p99_ms max_ms
} | tee "$REPORT"
for variant in $VARIANTS; do
    for n in 1 2 4; do
        col=q_any; [[ $variant == before ]] && col=q_typed
        mode=simple; value="quote_literal($col)"; file=$variant
        case $variant in
            after) mode=prepared; value=$col ;;
            custom) file=after ;;
        esac
        script=$WORK/$variant-$n.pgbench
        { echo "\\set i random(1, 100)"
          echo "SELECT $value AS q FROM bench_queries WHERE words = $n AND i = :i \\gset"
          cat "$BENCH_DIR/search_scale_$file.sql"; } >"$script"
        (cd "$WORK" && pgbench -n -M "$mode" -c "$CONCURRENCY" -j 2 -T "$SECS" -f "$script" -l \
            --log-prefix="$variant-$n" "$DB" >"$WORK/$variant-$n.out" 2>&1) || { cat "$WORK/$variant-$n.out" >&2; die "pgbench failed"; }
        cat "$WORK/$variant-$n".[0-9]* | awk '{ print $3 / 1000 }' | sort -n >"$WORK/$variant-$n.lat"
        awk -v v="$variant" -v n="$n" '{ a[NR] = $1 } END {
            p50 = a[int(NR * 0.5) > 0 ? int(NR * 0.5) : 1]; p99 = a[int(NR * 0.99) > 0 ? int(NR * 0.99) : 1]
            printf "%-8s %-6s %8d %8.1f %8.1f %8.1f\n", v, n, NR, p50, p99, a[NR] }' "$WORK/$variant-$n.lat" | tee -a "$REPORT"
        rm -f "$WORK/$variant-$n".[0-9]*
        # The plan of the query of this size with the most matches in A.
        q=$(psql -X -Atq -d "$DB" -c "SELECT quote_literal($col) FROM bench_queries b WHERE words = $n
              ORDER BY (SELECT count(*) FROM observations o WHERE o.project_id = '00000000-0000-4000-8000-000000000000'
                        AND o.search @@ websearch_to_tsquery('english', b.q_typed)) DESC LIMIT 1")
        { echo "== $variant $n words: $q"
          sed '/^--/d' "$BENCH_DIR/search_scale_$file.sql" |
              sed "s/:q/$(printf '%s' "$q" | sed 's/[\/&]/\\&/g')/g" |
              sed '1s/^/EXPLAIN (ANALYZE, BUFFERS) /' | psql -X -q -d "$DB" -f - ; } >>"$WORK/explain.txt" 2>&1
    done
done
echo "plans: ${WORK#"$ROOT"/}/explain.txt; database $DB$([[ ${KEEP_DB:-0} == 1 ]] && echo ' (kept)')" | tee -a "$REPORT"
