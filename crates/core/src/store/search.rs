//! The search statement: observations and summaries that match, scored in
//! one projection (`UNION ALL`), ordered and paged in SQL; then the rows of
//! the page, loaded by id.
//!
//! The statement text depends on the order and on which filters are in use
//! (`Shape`): only their conditions are written, so every plan — custom or
//! generic — can use the indexes of migrations 0004/0005/0009 (GIN on
//! `(project_id, search)`, on `(search_bucket, search)`, on
//! `files_read || files_modified` and on `concepts`; btree on
//! `(project_id, created_at)`). Every value is a bound
//! parameter at a fixed position; one a statement does not use is still bound.
//!
//! | $  | value |
//! |----|-------|
//! | 1  | project id (every row is bounded to it) |
//! | 2  | `as_of`, or NULL for now |
//! | 3  | query text, or NULL |
//! | 4  | types (any of), `{}` for all |
//! | 5  | concepts (any of), `{}` for all |
//! | 6  | file path, or NULL |
//! | 7  | `LIKE` pattern for a path ending in `/<file>` |
//! | 8  | session id |
//! | 9  | agent of the session |
//! | 10 | platform source of the session |
//! | 11 | since (inclusive) |
//! | 12 | until (inclusive) |
//! | 13 | summaries wanted (decided in `Shape`; bound, unused) |
//! | 14 | rows to fetch (the page plus one, to know if there is more) |
//! | 15 | offset |
//! | 16 | excluded words (`-word`), or NULL |
//! | 17 | member id |
//! | 18 | the viewer's member id (private memories are theirs to see), or NULL |
//! | 19 | the viewer sees every memory (an admin) |

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::{PgPool, prelude::FromRow};
use uuid::Uuid;

use crate::search::{
    Filters, Order,
    rank::{AS_OF, EXCLUDE, TSQUERY, score, state_weight},
};
use crate::store::observations::{self, ObservationRow, SummaryRow};

/// A hit before its row is loaded.
#[derive(Clone, Debug, FromRow)]
pub struct HitKey {
    /// `observation` or `summary`.
    pub source: String,
    pub id: Uuid,
    pub score: f64,
    /// The clock the page was computed at (for the next cursor).
    pub as_of: DateTime<Utc>,
}

pub struct Params<'a> {
    pub project_id: Uuid,
    pub as_of: Option<DateTime<Utc>>,
    /// Wanted words, ` or `-joined (`query::Text::any`).
    pub query: Option<&'a str>,
    /// Excluded words, ` or `-joined (`query::Text::exclude`).
    pub exclude: Option<&'a str>,
    pub filters: &'a Filters,
    pub summaries: bool,
    pub fetch: i64,
    pub offset: i64,
}

/// Which filters a search uses. Only their conditions are written into the
/// statement, so the planner sees plain predicates (`search @@ …`, `kind =
/// ANY(…)`) and picks their indexes; `$n IS NULL OR …` forms would hide them
/// from a generic plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub query: bool,
    /// Some words are excluded (`-word`).
    pub exclude: bool,
    pub kinds: bool,
    pub concepts: bool,
    pub file: bool,
    pub session: bool,
    pub session_attrs: bool,
    pub member: bool,
    pub since: bool,
    pub until: bool,
    /// Summaries are wanted and no filter excludes them.
    pub summaries: bool,
}

impl Shape {
    pub fn of(p: &Params<'_>) -> Self {
        let f = p.filters;
        Self {
            query: p.query.is_some(),
            exclude: p.query.is_some() && p.exclude.is_some(),
            kinds: !f.kinds.is_empty(),
            concepts: !f.concepts.is_empty(),
            file: f.file.is_some(),
            session: f.session_id.is_some(),
            session_attrs: f.agent.is_some() || f.platform_source.is_some(),
            member: f.member_id.is_some(),
            since: f.since.is_some(),
            until: f.until.is_some(),
            // Summaries have no type, concept or file: such a filter excludes them.
            summaries: p.summaries && f.kinds.is_empty() && f.concepts.is_empty() && f.file.is_none(),
        }
    }

    /// Words and no filter: the common search, whose statement is kept
    /// prepared (see [`hits`]).
    pub fn words_only(&self) -> bool {
        self.query
            && !(self.kinds
                || self.concepts
                || self.file
                || self.session
                || self.session_attrs
                || self.member
                || self.since
                || self.until)
    }
}

/// A search ranks only the newest this-many matches of each source: ranking
/// reads each match's whole vector, and finding the newest matches of a
/// word in tens of thousands of rows reads a row per match or more; recency
/// is half the score anyway. Filters narrow the matches before the cap.
pub const SEARCH_RANKED_MATCHES: i64 = 200;

/// Where a summary's newest matches are looked for first (`window`).
pub const RECENT_WINDOW_DAYS: i64 = 14;

/// The rings an observation's newest matches are looked for in, newest
/// first: `[lo, hi)` UTC days back from the day of `as_of`, then `[lo, hi)`
/// weeks back from the week of the day eight days before it (the day rings
/// cover the eight days up to `as_of`; a week ring leaves out what they
/// cover). Each day or week of a ring is one probe of
/// `observations_period_search_idx` (migration 0009): 24 probes reach back
/// 16 weeks past the first 8 days. Rows older than the last ring are found
/// through the project's own GIN: a word with fewer than
/// `SEARCH_RANKED_MATCHES` matches in four months is rare, and reading all
/// its matches costs less than probing every older week.
pub const DAY_RINGS: [(i32, i32); 4] = [(0, 1), (1, 2), (2, 4), (4, 8)];
/// See `DAY_RINGS`.
pub const WEEK_RINGS: [(i32, i32); 5] = [(0, 1), (1, 2), (2, 4), (4, 8), (8, 16)];

/// How a statement bounds rows to the project ($1).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Project {
    /// `project_id = $1`: the planner may use any index that leads with it.
    Indexed,
    /// The same test in a form no index answers: where the day key already
    /// bounds the rows to the project, intersecting them with the project's
    /// whole `(project_id, created_at)` index would cost more than it saves.
    Checked,
}

/// Conditions shared by both sources: the project, the clock, the text, the
/// session and its agent, the date range. `alias` is the table's.
fn common_conditions(alias: &str, shape: Shape, project: Project) -> String {
    let mut c = vec![
        crate::tenancy::Viewer::condition(alias, 18, 19),
        match project {
            Project::Indexed => format!("{alias}.project_id = $1"),
            Project::Checked => format!("{alias}.project_id::text = $1::text"),
        },
        format!("{alias}.created_at <= {AS_OF}"),
    ];
    if shape.query {
        c.push(format!("{alias}.search @@ {TSQUERY}"));
    }
    if shape.exclude {
        c.push(format!("NOT ({alias}.search @@ {EXCLUDE})"));
    }
    if shape.session {
        c.push(format!("{alias}.session_id = $8::uuid"));
    }
    if shape.session_attrs {
        c.push(format!(
            "EXISTS (SELECT 1 FROM sessions s WHERE s.project_id = $1 AND s.id = {alias}.session_id
                       AND ($9::text IS NULL OR s.agent = $9::text)
                       AND ($10::text IS NULL OR s.platform_source = $10::text))"
        ));
    }
    if shape.member {
        c.push(format!("{alias}.member_id = $17::uuid"));
    }
    if shape.since {
        c.push(format!("{alias}.created_at >= $11::timestamptz"));
    }
    if shape.until {
        c.push(format!("{alias}.created_at <= $12::timestamptz"));
    }
    c.join("\n AND ")
}

fn observation_conditions(shape: Shape, project: Project) -> String {
    // Merged and archived memories are found by id, not by search (migration 0014).
    let mut c = vec![
        common_conditions("o", shape, project),
        "o.state NOT IN ('merged', 'archived')".into(),
    ];
    if shape.kinds {
        c.push("o.kind = ANY($4::text[])".into());
    }
    if shape.concepts {
        c.push("o.concepts && $5::text[]".into());
    }
    if shape.file {
        c.push(
            "((o.files_read || o.files_modified) @> ARRAY[$6::text]
              OR EXISTS (SELECT 1 FROM unnest(o.files_read || o.files_modified) AS f(path)
                         WHERE f.path LIKE $7::text))"
                .into(),
        );
    }
    c.join("\n AND ")
}

/// The observations to score: with a query ranked by relevance, the newest
/// `SEARCH_RANKED_MATCHES` matches; otherwise every row the conditions keep.
///
/// The newest matches are found ring by ring (`DAY_RINGS`, `WEEK_RINGS`):
/// each ring's matches come from the period-key GIN and are sorted newest
/// first, the rings are read newest first (a nested loop over each `VALUES`
/// list, the day rings' before the week rings', then the rows older than
/// the last ring), and the `LIMIT` stops reading at the ring that completes
/// the quota. So a search reads about as many rows as it keeps, plus the
/// rest of the last ring: a frequent word stops within the first day, a rare
/// one reads its few matches of each ring.
fn observations(shape: Shape, order: Order) -> String {
    let columns = "o.id, o.created_at, o.search, o.state";
    if !(shape.query && order == Order::Relevance) {
        let conditions = observation_conditions(shape, Project::Indexed);
        return format!("(SELECT {columns} FROM observations o WHERE {conditions})");
    }
    let n = SEARCH_RANKED_MATCHES;
    let values = |rings: &[(i32, i32)]| {
        rings
            .iter()
            .map(|(lo, hi)| format!("({lo}, {hi})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // The period (in days) of `as_of` minus `back` days, as in migration 0009.
    let day = format!("floor(extract(epoch FROM {AS_OF}) / 86400)");
    let first_week_day = DAY_RINGS[DAY_RINGS.len() - 1].1;
    let weeks = WEEK_RINGS[WEEK_RINGS.len() - 1].1;
    let ring = |column: &str, days: i32, key_day: &str, rings: &[(i32, i32)], bound: &str| {
        format!(
            "(SELECT c.* FROM (VALUES {rings}) r(lo, hi),
                 LATERAL (SELECT {columns} FROM observations o
                          WHERE {conditions}{bound}
                            AND o.{column} = ANY(ARRAY(
                                SELECT search_bucket($1::uuid, {AS_OF} - ({key_day}) * interval '1 day', {days})
                                FROM generate_series(r.lo, r.hi - 1) k))
                          ORDER BY o.created_at DESC) c)",
            rings = values(rings),
            conditions = observation_conditions(shape, Project::Checked),
        )
    };
    format!(
        "({days}
          UNION ALL
          {weeks_ring}
          UNION ALL
          (SELECT {columns} FROM observations o
           WHERE {conditions}
             AND o.created_at < to_timestamp((floor(({day} - {first_week_day}) / 7) - {last_week}) * 7 * 86400)
           ORDER BY o.created_at DESC LIMIT {n})
          LIMIT {n})",
        days = ring("search_day", 1, "k", &DAY_RINGS, ""),
        weeks_ring = ring(
            "search_week",
            7,
            &format!("{first_week_day} + 7 * k"),
            &WEEK_RINGS,
            &format!("\n AND o.created_at < to_timestamp(({day} - {}) * 86400)", first_week_day - 1),
        ),
        conditions = observation_conditions(shape, Project::Indexed),
        last_week = weeks - 1,
    )
}

/// The summaries to score: with a query ranked by relevance, the newest
/// `SEARCH_RANKED_MATCHES` matches; otherwise every row the conditions keep.
///
/// The newest matches are looked for in two steps. First within the last
/// `RECENT_WINDOW_DAYS` before `as_of` (a frequent word fills the quota there
/// after reading a few hundred rows); only when that window holds fewer than
/// the quota does the second step (a one-time filter Postgres skips
/// otherwise) take the newest matches of all time. Either way the result is
/// exactly the newest `SEARCH_RANKED_MATCHES` matches.
fn summaries(shape: Shape, order: Order) -> String {
    let columns = "su.id, su.created_at, su.search";
    let conditions = common_conditions("su", shape, Project::Indexed);
    if !(shape.query && order == Order::Relevance) {
        return format!("(SELECT {columns} FROM summaries su WHERE {conditions})");
    }
    let n = SEARCH_RANKED_MATCHES;
    format!(
        "(WITH su_recent AS MATERIALIZED (
             SELECT {columns} FROM summaries su
             WHERE {conditions}
               AND su.created_at > {AS_OF} - interval '{RECENT_WINDOW_DAYS} days'
             ORDER BY su.created_at DESC LIMIT {n})
          SELECT * FROM su_recent WHERE (SELECT count(*) FROM su_recent) >= {n}
          UNION ALL
          (SELECT {columns} FROM summaries su
           WHERE (SELECT count(*) FROM su_recent) < {n}
             AND {conditions}
           ORDER BY su.created_at DESC LIMIT {n}))"
    )
}

pub fn statement(order: Order, shape: Shape) -> String {
    let order_by = match order {
        Order::Relevance => "score DESC, created_at DESC, id DESC",
        Order::Newest => "created_at DESC, id DESC",
        Order::Oldest => "created_at ASC, id ASC",
    };
    // Each source is ordered and cut to `offset + fetch` on its own (the
    // page lies within the union of both sources' tops), so listing the
    // newest walks `(project_id, created_at)` and stops early; then the two
    // are merged and paged. Ids are unique across both tables (UUIDs), so
    // `id` settles every tie.
    let observations = observations(shape, order);
    let mut sql = format!(
        "SELECT source, id, score, {AS_OF} AS as_of FROM (
             (SELECT 'observation'::text AS source, o.id, o.created_at, {obs_score} * {state_weight} AS score
              FROM {observations} o
              ORDER BY {order_by} LIMIT $14 + $15)",
        obs_score = score("o"),
        state_weight = state_weight("o"),
    );
    if shape.summaries {
        let summaries = summaries(shape, order);
        sql.push_str(&format!(
            "
             UNION ALL
             (SELECT 'summary'::text AS source, su.id, su.created_at, {sum_score} AS score
              FROM {summaries} su
              ORDER BY {order_by} LIMIT $14 + $15)",
            sum_score = score("su"),
        ));
    }
    sql.push_str(&format!(
        "
         ) hits
         ORDER BY {order_by}
         LIMIT $14 OFFSET $15"
    ));
    sql
}

/// Binds `$p` (`Params`) to the statement `$q` at the positions the
/// module's table gives: one statement text for `hits` and `narrowed`.
macro_rules! bind_params {
    ($q:expr, $p:expr) => {{
        let p: &Params<'_> = $p;
        let f = p.filters;
        $q.bind(p.project_id)
            .bind(p.as_of)
            .bind(p.query)
            .bind(&f.kinds)
            .bind(&f.concepts)
            .bind(f.file.as_deref())
            .bind(f.file.as_deref().map(suffix_pattern))
            .bind(f.session_id)
            .bind(f.agent.as_deref())
            .bind(f.platform_source.as_deref())
            .bind(f.since)
            .bind(f.until)
            .bind(p.summaries)
            .bind(p.fetch)
            .bind(p.offset)
            .bind(p.exclude)
            .bind(f.member_id)
            .bind(f.viewer.member_id)
            .bind(f.viewer.sees_all)
    }};
}

/// The statement of [`narrowed`]: the ids of every observation (and
/// summary, when the shape keeps them) its conditions keep, unordered and
/// uncut.
fn narrowing_statement(shape: Shape) -> String {
    let mut sql = format!(
        "SELECT o.id FROM observations o WHERE {}",
        observation_conditions(shape, Project::Indexed)
    );
    if shape.summaries {
        sql.push_str(&format!(
            "\n UNION ALL SELECT su.id FROM summaries su WHERE {}",
            common_conditions("su", shape, Project::Indexed)
        ));
    }
    sql
}

/// Every memory of the project that passes `p`'s filters (and its words,
/// when `p.query` is given: a quoted phrase is matched as a phrase), with
/// no window of newest matches: the set the retrieval engine then ranks
/// when a search has a filter the engine does not hold (concept, file,
/// agent, platform, member, a phrase). `p.fetch` and `p.offset` are not
/// used.
#[tracing::instrument(skip(pool, p), fields(project_id = %p.project_id), err)]
pub async fn narrowed(pool: &PgPool, p: &Params<'_>) -> sqlx::Result<HashSet<Uuid>> {
    let shape = Shape::of(p);
    let ids: Vec<Uuid> = bind_params!(
        sqlx::query_scalar(sqlx::AssertSqlSafe(narrowing_statement(shape))).persistent(false),
        p
    )
    .fetch_all(pool)
    .await?;
    Ok(ids.into_iter().collect())
}

/// `%/<file>` with `LIKE`'s own characters escaped: a path that ends in `/<file>`.
pub fn suffix_pattern(file: &str) -> String {
    let mut pattern = String::from("%/");
    for c in file.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

#[tracing::instrument(skip(pool, order, p), fields(project_id = %p.project_id), err)]
pub async fn hits(pool: &PgPool, order: Order, p: &Params<'_>) -> sqlx::Result<Vec<HitKey>> {
    let shape = Shape::of(p);
    // A search for words alone is kept prepared: since the rings of days and
    // weeks its generic plan runs as fast as one planned with the values
    // (bench/README.md), and planning was a third of its cost. Postgres
    // takes the generic plan after five custom ones only if its estimate is
    // no worse. With filters it is planned with the values every time: a
    // generic plan there once fetched and sorted every match of a frequent
    // word (≈190 ms against ≈20 ms).
    bind_params!(
        sqlx::query_as(sqlx::AssertSqlSafe(statement(order, shape))).persistent(shape.words_only()),
        p
    )
    .fetch_all(pool)
    .await
}

/// The rows of these hits, by id.
#[tracing::instrument(skip(pool, keys), fields(hits = keys.len()), err)]
pub async fn load(
    pool: &PgPool,
    project_id: Uuid,
    keys: &[HitKey],
) -> sqlx::Result<(HashMap<Uuid, ObservationRow>, HashMap<Uuid, SummaryRow>)> {
    let ids =
        |source: &str| -> Vec<Uuid> { keys.iter().filter(|k| k.source == source).map(|k| k.id).collect() };
    let (observation_ids, summary_ids) = (ids("observation"), ids("summary"));
    let observations = async {
        if observation_ids.is_empty() {
            return Ok(vec![]);
        }
        observations::by_ids(pool, project_id, &observation_ids, crate::tenancy::Viewer::ALL).await
    };
    let summaries = async {
        if summary_ids.is_empty() {
            return Ok(vec![]);
        }
        summaries_by_ids(pool, project_id, &summary_ids).await
    };
    let (observations, summaries) = tokio::try_join!(observations, summaries)?;
    Ok((
        observations.into_iter().map(|r| (r.id, r)).collect(),
        summaries.into_iter().map(|r| (r.id, r)).collect(),
    ))
}

#[tracing::instrument(skip(pool, ids), err)]
async fn summaries_by_ids(pool: &PgPool, project_id: Uuid, ids: &[Uuid]) -> sqlx::Result<Vec<SummaryRow>> {
    sqlx::query_as(
        "SELECT id, session_id, scope, prompt_number, request, learned, completed, next_steps, created_at
         FROM summaries WHERE project_id = $1 AND id = ANY($2)",
    )
    .bind(project_id)
    .bind(ids)
    .fetch_all(pool)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_characters_in_a_file_name_are_literal() {
        assert_eq!(suffix_pattern("parser.rs"), "%/parser.rs");
        assert_eq!(suffix_pattern("a_b%c\\d"), "%/a\\_b\\%c\\\\d");
    }

    /// The statement of a search for words with no filter, summaries
    /// included (what `GET /v1/search?query=…` runs), as the benchmarks
    /// replay it: `bench/search_hits.sql` prepares it with the parameter
    /// types sqlx binds (for `bench/explain.sql`), and
    /// `bench/search_scale_after.sql` has the values of `bench/search_scale.sh`
    /// written in (project A, a page of 20, the query as `:q`). Both files are
    /// written from the code: `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-api
    /// --lib bench_copies` rewrites them, and this test fails when they drift.
    #[test]
    fn bench_copies_of_the_statement_are_current() {
        let statement = statement(
            Order::Relevance,
            Shape {
                query: true,
                summaries: true,
                ..Shape::default()
            },
        );
        let prepared = format!(
            "-- Written by `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copies`\n\
             -- from crates/core/src/store/search.rs: a search for words, no filter, summaries\n\
             -- included, with the parameter types sqlx binds. Do not edit.\n\
             PREPARE search_hits(uuid, timestamptz, text, text[], text[], text, text, uuid, text, text,\n\
             \x20                   timestamptz, timestamptz, boolean, int8, int8, text, uuid, uuid, boolean) AS\n{statement};\n"
        );
        // Highest numbers first, so `$1` does not eat the front of `$14`.
        let values = [
            (19, "false"),
            (18, "NULL"),
            (17, "NULL"),
            (16, "NULL"),
            (15, "0"),
            (14, "21"),
            (13, "true"),
            (12, "NULL"),
            (11, "NULL"),
            (10, "NULL"),
            (9, "NULL"),
            (8, "NULL"),
            (7, "NULL"),
            (6, "NULL"),
            (5, "'{}'"),
            (4, "'{}'"),
            (3, ":q"),
            (2, "NULL"),
            (1, "'00000000-0000-4000-8000-000000000000'"),
        ];
        let mut literal = statement.clone();
        for (n, value) in values {
            literal = literal.replace(&format!("${n}"), value);
        }
        assert!(!literal.contains('$'), "{literal}");
        let literal = format!(
            "-- Written by `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copies`\n\
             -- from crates/core/src/store/search.rs, with bench/search_scale.sh's values\n\
             -- written in (project A, 21 rows, offset 0, the query as :q). Do not edit.\n{literal};\n"
        );
        let bench = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench");
        for (file, text) in [("search_hits.sql", prepared), ("search_scale_after.sql", literal)] {
            let path = bench.join(file);
            if std::env::var_os("CAIRN_UPDATE_BENCH_SQL").is_some() {
                std::fs::write(&path, &text).unwrap();
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == text,
                "bench/{file} is not the statement store/search.rs writes: \
                 CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copies"
            );
        }
    }

    #[test]
    fn only_the_filters_in_use_are_written() {
        let bare = statement(
            Order::Relevance,
            Shape {
                summaries: true,
                ..Shape::default()
            },
        );
        assert!(
            !bare.contains("@@") && !bare.contains("$4") && !bare.contains("$6") && !bare.contains("$16"),
            "{bare}"
        );
        assert!(bare.contains("'summary'"), "summaries are searched when wanted");
        let full = Shape {
            query: true,
            exclude: true,
            kinds: true,
            concepts: true,
            file: true,
            session: true,
            session_attrs: true,
            member: true,
            since: true,
            until: true,
            summaries: false,
        };
        for order in [Order::Relevance, Order::Newest, Order::Oldest] {
            let sql = statement(order, full);
            for n in (1..=12).chain(14..=19) {
                assert!(sql.contains(&format!("${n}")), "${n} in {sql}");
            }
            assert!(!sql.contains("'summary'"), "no summaries asked for");
            assert_eq!(
                sql.contains(&format!("LIMIT {SEARCH_RANKED_MATCHES}")),
                order == Order::Relevance
            );
        }
        let text = Shape {
            query: true,
            summaries: true,
            ..Shape::default()
        };
        assert_eq!(
            statement(Order::Relevance, text)
                .matches(&format!("LIMIT {SEARCH_RANKED_MATCHES}"))
                .count(),
            4
        );
    }
}
