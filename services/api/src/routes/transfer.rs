//! A project's memory in and out as JSON Lines (admin; audited):
//! `GET /v1/projects/{projectId}/export` streams sessions, then observations,
//! then summaries, a page at a time; `POST /v1/projects/{projectId}/import`
//! takes the same lines.
//!
//! Import is all or nothing: every line is checked first, and one bad line
//! (unparsable, a value out of range, a reference to a session that is
//! neither in the request nor in the project) answers 422 `invalid_lines`
//! naming the lines, and nothing is written. A good request is written in
//! one transaction, in batches. Records whose id already stands in the
//! project are left as they are, so importing the same lines twice adds
//! nothing. The body is bounded by `CAIRN_MAX_BODY_BYTES`: the CLI sends a
//! large file in several requests.

use std::collections::{HashMap, HashSet};

use axum::{
    body::{Body, Bytes},
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use cairn_shared::{auth::Scope, time::from_epoch_ms};
use futures::StreamExt;
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    auth::{Auth, ProjectRef},
    error::{ApiError, ApiResult},
    extract::{Json, Path, RawBody},
    routes::admin::{Target, record},
    state::AppState,
    store::transfer::{
        self as store, BATCH, Cursor, ObservationRecord, Record, SessionRecord, SummaryRecord, Table,
    },
};

pub const NDJSON: &str = "application/x-ndjson";
/// Bad lines named in a 422, at most.
const NAMED_BAD_LINES: usize = 10;

/// Export a project's memory as JSON Lines (admin; audited).
///
/// One record per line, with `type` `session`, `observation` or `summary`;
/// sessions come first. Raw events and jobs are not memory and are left out.
#[utoipa::path(get, path = "/v1/projects/{projectId}/export", tag = "projects",
    params(("projectId" = String, Path, description = "Project id or slug")),
    responses((status = 200, content_type = "application/x-ndjson", body = String,
               description = "One JSON record per line"),
              (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn export_project(
    State(state): State<AppState>,
    auth: Auth,
    Path(project_id): Path<String>,
) -> ApiResult<Response> {
    auth.require(Scope::Admin)?;
    let project = auth.project(&state, Some(&project_id)).await?;
    audit(
        &state.pool,
        &auth,
        project,
        "project.export",
        serde_json::json!({}),
    )
    .await?;
    let lines = futures::stream::unfold(
        (state.pool.clone(), project.id, Phase::Sessions(None)),
        next_chunk,
    )
    .filter(|chunk| futures::future::ready(chunk.as_ref().map_or(true, |b| !b.is_empty())));
    Ok(([(header::CONTENT_TYPE, NDJSON)], Body::from_stream(lines)).into_response())
}

/// Where the export stream stands.
#[derive(Clone, Copy)]
enum Phase {
    Sessions(Option<Uuid>),
    Observations(Option<Cursor>),
    Summaries(Option<Cursor>),
    Done,
}

/// The next page of records and where the one after starts.
async fn fetch(pool: &PgPool, project: Uuid, phase: Phase) -> sqlx::Result<(Vec<Record>, Phase)> {
    let full = |n: usize| n == BATCH;
    Ok(match phase {
        Phase::Sessions(after) => {
            let rows = store::sessions_page(pool, project, after).await?;
            let next = match rows.last() {
                Some(last) if full(rows.len()) => Phase::Sessions(Some(last.id)),
                _ => Phase::Observations(None),
            };
            (rows.into_iter().map(Record::Session).collect(), next)
        }
        Phase::Observations(after) => {
            let rows = store::observations_page(pool, project, after).await?;
            let next = match rows.last().and_then(|l| cursor(l.cursor_at, l.id)) {
                Some(c) if full(rows.len()) => Phase::Observations(Some(c)),
                _ => Phase::Summaries(None),
            };
            (rows.into_iter().map(Record::Observation).collect(), next)
        }
        Phase::Summaries(after) => {
            let rows = store::summaries_page(pool, project, after).await?;
            let next = match rows.last().and_then(|l| cursor(l.cursor_at, l.id)) {
                Some(c) if full(rows.len()) => Phase::Summaries(Some(c)),
                _ => Phase::Done,
            };
            (rows.into_iter().map(Record::Summary).collect(), next)
        }
        Phase::Done => (Vec::new(), Phase::Done),
    })
}

fn cursor(at: Option<chrono::DateTime<chrono::Utc>>, id: Uuid) -> Option<Cursor> {
    at.map(|at| Cursor { at, id })
}

type Chunk = Result<Bytes, sqlx::Error>;

/// One step of the export stream: a page as NDJSON bytes. A database error
/// ends the stream early: the client sees a body cut short.
async fn next_chunk(state: (PgPool, Uuid, Phase)) -> Option<(Chunk, (PgPool, Uuid, Phase))> {
    let (pool, project, phase) = state;
    if let Phase::Done = phase {
        return None;
    }
    match fetch(&pool, project, phase).await {
        Ok((records, next)) => Some((Ok(ndjson(&records)), (pool, project, next))),
        Err(e) => {
            tracing::error!(error = %e, "export cut short");
            Some((Err(e), (pool, project, Phase::Done)))
        }
    }
}

fn ndjson(records: &[Record]) -> Bytes {
    let mut out = Vec::with_capacity(records.len() * 512);
    for r in records {
        // A record of plain data always serialises.
        if serde_json::to_writer(&mut out, r).is_ok() {
            out.push(b'\n');
        }
    }
    Bytes::from(out)
}

/// How many records an import wrote, and how many it found already there.
#[derive(Serialize, ToSchema, Default, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ImportCounts {
    pub sessions: u64,
    pub observations: u64,
    pub summaries: u64,
}

#[derive(Serialize, ToSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ImportResponse {
    /// Non-blank lines read.
    pub lines: u64,
    /// Records written.
    pub imported: ImportCounts,
    /// Records already in the project (by id, or a session by agent and
    /// agent session id), left as they were.
    pub existing: ImportCounts,
}

/// Import JSON Lines of a project's memory (admin; audited; all or nothing).
///
/// The lines of `GET …/export`. Ids are kept where free, else derived from
/// the target project and the id, so a second import adds nothing.
/// References (`sessionId`) are rewritten to the rows in this project.
#[utoipa::path(post, path = "/v1/projects/{projectId}/import", tag = "projects",
    params(("projectId" = String, Path, description = "Project id or slug")),
    request_body(content = String, content_type = "application/x-ndjson",
                 description = "One record per line: `type` session, observation or summary"),
    responses((status = 200, body = ImportResponse),
              (status = 404, body = crate::error::ErrorBody),
              (status = 413, body = crate::error::ErrorBody),
              (status = 422, body = crate::error::ErrorBody, description = "Bad lines, named; nothing written")),
    security(("bearer" = [])))]
pub async fn import_project(
    State(state): State<AppState>,
    auth: Auth,
    Path(project_id): Path<String>,
    RawBody(body): RawBody,
) -> ApiResult<Json<ImportResponse>> {
    auth.require(Scope::Admin)?;
    let project = auth.project(&state, Some(&project_id)).await?;
    let parsed = parse(&body)?;
    let mut tx = state.pool.begin().await?;
    let (imported, existing) = write(&mut tx, project, &parsed).await?;
    audit(
        &mut *tx,
        &auth,
        project,
        "project.import",
        serde_json::json!({"lines": parsed.lines, "imported": imported, "existing": existing}),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(ImportResponse {
        lines: parsed.lines,
        imported,
        existing,
    }))
}

/// The request's records by kind, each with its line number.
#[derive(Default)]
struct Parsed {
    lines: u64,
    sessions: Vec<(usize, SessionRecord)>,
    observations: Vec<(usize, ObservationRecord)>,
    summaries: Vec<(usize, SummaryRecord)>,
}

fn parse(body: &[u8]) -> Result<Parsed, ApiError> {
    let mut parsed = Parsed::default();
    let mut bad: Vec<(usize, String)> = Vec::new();
    for (index, line) in body.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        parsed.lines += 1;
        match parse_line(line) {
            Ok(Record::Session(r)) => parsed.sessions.push((number, r)),
            Ok(Record::Observation(r)) => parsed.observations.push((number, r)),
            Ok(Record::Summary(r)) => parsed.summaries.push((number, r)),
            Err(why) => bad.push((number, why)),
        }
    }
    if bad.is_empty() {
        Ok(parsed)
    } else {
        Err(bad_lines(&bad))
    }
}

fn bad_lines(bad: &[(usize, String)]) -> ApiError {
    let named: Vec<String> = bad
        .iter()
        .take(NAMED_BAD_LINES)
        .map(|(n, why)| format!("line {n}: {why}"))
        .collect();
    let more = bad.len().saturating_sub(NAMED_BAD_LINES);
    let tail = if more > 0 {
        format!("; and {more} more")
    } else {
        String::new()
    };
    ApiError::unprocessable(
        "invalid_lines",
        format!(
            "{} bad line(s), nothing was imported: {}{tail}",
            bad.len(),
            named.join("; ")
        ),
    )
}

fn parse_line(line: &[u8]) -> Result<Record, String> {
    // Postgres stores no U+0000 in text or jsonb.
    if line.windows(6).any(|w| w.eq_ignore_ascii_case(b"\\u0000")) {
        return Err("U+0000 cannot be stored".into());
    }
    let record: Record = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    check(&record)?;
    Ok(record)
}

/// The checks the database would otherwise fail the whole request on.
fn check(record: &Record) -> Result<(), String> {
    let time = |name: &str, ms: Option<i64>| match ms {
        Some(ms) if from_epoch_ms(ms).is_none() => Err(format!("`{name}` is out of range")),
        _ => Ok(()),
    };
    let one_of = |name: &str, value: &str, allowed: &[&str]| {
        if allowed.contains(&value) {
            Ok(())
        } else {
            Err(format!("`{name}` is one of {}", allowed.join(", ")))
        }
    };
    let object = |v: &serde_json::Value| {
        if v.is_object() {
            Ok(())
        } else {
            Err("`metadata` is an object".to_string())
        }
    };
    match record {
        Record::Session(s) => {
            if s.agent.trim().is_empty() || s.agent.len() > 100 {
                return Err("`agent` is 1 to 100 characters".into());
            }
            if s.external_session_id.is_empty() || s.external_session_id.len() > 256 {
                return Err("`externalSessionId` is 1 to 256 characters".into());
            }
            one_of("status", &s.status, &["active", "ended"])?;
            object(&s.metadata)?;
            time("startedAtEpoch", Some(s.started_at_epoch))?;
            time("endedAtEpoch", s.ended_at_epoch)?;
            time("createdAtEpoch", s.created_at_epoch)?;
            time("updatedAtEpoch", s.updated_at_epoch)
        }
        Record::Observation(o) => {
            if o.kind.trim().is_empty() || o.kind.len() > 100 {
                return Err("`kind` is 1 to 100 characters".into());
            }
            one_of("origin", &o.origin, &["generated", "manual"])?;
            object(&o.metadata)?;
            time("createdAtEpoch", Some(o.created_at_epoch))?;
            time("updatedAtEpoch", o.updated_at_epoch)
        }
        Record::Summary(s) => {
            one_of("scope", &s.scope, &["turn", "session"])?;
            time("createdAtEpoch", Some(s.created_at_epoch))
        }
    }
}

/// Writes the records in batches: sessions first, then what refers to them.
async fn write(
    tx: &mut sqlx::PgConnection,
    project: ProjectRef,
    parsed: &Parsed,
) -> ApiResult<(ImportCounts, ImportCounts)> {
    let mut imported = ImportCounts::default();
    // Record session id → the session standing for it in this project.
    let mut sessions: HashMap<Uuid, Uuid> = HashMap::new();
    for batch in parsed.sessions.chunks(BATCH) {
        let ids: Vec<Uuid> = batch.iter().map(|(_, r)| r.id).collect();
        let targets = store::target_ids(tx, Table::Sessions, project.id, &ids).await?;
        let rows: Vec<SessionRecord> = batch
            .iter()
            .map(|(_, r)| SessionRecord {
                id: targets[&r.id],
                ..r.clone()
            })
            .collect();
        let (n, standing) = store::insert_sessions(tx, project.team_id, project.id, &rows).await?;
        imported.sessions += n;
        for (_, r) in batch {
            if let Some(id) = standing.get(&targets[&r.id]) {
                sessions.insert(r.id, *id);
            }
        }
    }
    // Sessions referred to but not in the request: earlier imports or live ones.
    let wanted: Vec<Uuid> = parsed
        .observations
        .iter()
        .filter_map(|(_, o)| o.session_id)
        .chain(parsed.summaries.iter().map(|(_, s)| s.session_id))
        .filter(|id| !sessions.contains_key(id))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    if !wanted.is_empty() {
        sessions.extend(store::existing_sessions(tx, project.id, &wanted).await?);
    }
    let unknown: Vec<(usize, String)> = parsed
        .observations
        .iter()
        .filter_map(|(n, o)| o.session_id.map(|s| (*n, s)))
        .chain(parsed.summaries.iter().map(|(n, s)| (*n, s.session_id)))
        .filter(|(_, s)| !sessions.contains_key(s))
        .map(|(n, s)| {
            (
                n,
                format!("session {s} is neither in the request nor in the project"),
            )
        })
        .collect();
    if !unknown.is_empty() {
        let mut unknown = unknown;
        unknown.sort();
        return Err(bad_lines(&unknown));
    }
    for batch in parsed.observations.chunks(BATCH) {
        let ids: Vec<Uuid> = batch.iter().map(|(_, r)| r.id).collect();
        let targets = store::target_ids(tx, Table::Observations, project.id, &ids).await?;
        let rows: Vec<ObservationRecord> = batch
            .iter()
            .map(|(_, r)| ObservationRecord {
                id: targets[&r.id],
                session_id: r.session_id.map(|s| sessions[&s]),
                ..r.clone()
            })
            .collect();
        imported.observations += store::insert_observations(tx, project.team_id, project.id, &rows).await?;
    }
    for batch in parsed.summaries.chunks(BATCH) {
        let ids: Vec<Uuid> = batch.iter().map(|(_, r)| r.id).collect();
        let targets = store::target_ids(tx, Table::Summaries, project.id, &ids).await?;
        let rows: Vec<SummaryRecord> = batch
            .iter()
            .map(|(_, r)| SummaryRecord {
                id: targets[&r.id],
                session_id: sessions[&r.session_id],
                ..r.clone()
            })
            .collect();
        imported.summaries += store::insert_summaries(tx, project.team_id, project.id, &rows).await?;
    }
    let existing = ImportCounts {
        sessions: (parsed.sessions.len() as u64).saturating_sub(imported.sessions),
        observations: (parsed.observations.len() as u64).saturating_sub(imported.observations),
        summaries: (parsed.summaries.len() as u64).saturating_sub(imported.summaries),
    };
    Ok((imported, existing))
}

async fn audit(
    db: impl sqlx::PgExecutor<'_>,
    auth: &Auth,
    project: ProjectRef,
    action: &str,
    detail: serde_json::Value,
) -> sqlx::Result<()> {
    record(
        db,
        auth,
        Target {
            team_id: project.team_id,
            project_id: Some(project.id),
            kind: "project",
            id: project.id,
        },
        action,
        detail,
    )
    .await
}
