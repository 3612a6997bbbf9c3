//! A project's memory as records (sessions, observations, summaries): read a
//! page at a time for export, written in batches for import.
//!
//! Ids are kept where they are free; a record whose id another project
//! already holds (an export imported into a second project on the same
//! server) takes `uuid_v5(target project, id)`, the same every time, so a
//! second import of the same lines finds its rows and adds nothing.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgExecutor};
use uuid::Uuid;

/// Rows per page on export and per statement on import.
pub const BATCH: usize = 500;

/// One line of the export format, told apart by its `type`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Session(SessionRecord),
    Observation(ObservationRecord),
    Summary(SummaryRecord),
}

#[derive(Debug, Clone, Serialize, Deserialize, FromRow)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    pub id: Uuid,
    /// The project it was exported from (informative; import ignores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
    pub agent: String,
    pub external_session_id: String,
    pub content_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub platform_source: Option<String>,
    pub cwd: Option<String>,
    /// `active` or `ended`.
    #[serde(default = "active")]
    pub status: String,
    #[serde(default = "empty_object")]
    pub metadata: Value,
    pub started_at_epoch: i64,
    pub ended_at_epoch: Option<i64>,
    pub created_at_epoch: Option<i64>,
    pub updated_at_epoch: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, FromRow)]
#[serde(rename_all = "camelCase")]
pub struct ObservationRecord {
    pub id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
    pub session_id: Option<Uuid>,
    /// `generated` or `manual`.
    #[serde(default = "generated")]
    pub origin: String,
    pub kind: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub subtitle: String,
    #[serde(default)]
    pub facts: Vec<String>,
    #[serde(default)]
    pub narrative: String,
    #[serde(default)]
    pub concepts: Vec<String>,
    #[serde(default)]
    pub files_read: Vec<String>,
    #[serde(default)]
    pub files_modified: Vec<String>,
    #[serde(default)]
    pub content: String,
    #[serde(default = "empty_object")]
    pub metadata: Value,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub prompt_number: Option<i32>,
    pub created_at_epoch: i64,
    pub updated_at_epoch: Option<i64>,
    /// The export's page cursor, never on the wire.
    #[serde(skip)]
    #[sqlx(default)]
    pub cursor_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, FromRow)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRecord {
    pub id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<Uuid>,
    pub session_id: Uuid,
    /// `turn` or `session`.
    pub scope: String,
    pub prompt_number: Option<i32>,
    #[serde(default)]
    pub request: String,
    #[serde(default)]
    pub investigated: String,
    #[serde(default)]
    pub learned: String,
    #[serde(default)]
    pub completed: String,
    #[serde(default)]
    pub next_steps: String,
    #[serde(default)]
    pub notes: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub created_at_epoch: i64,
    #[serde(skip)]
    #[sqlx(default)]
    pub cursor_at: Option<DateTime<Utc>>,
}

fn active() -> String {
    "active".into()
}
fn generated() -> String {
    "generated".into()
}
fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Where an export page starts: after this row.
#[derive(Debug, Clone, Copy)]
pub struct Cursor {
    pub at: DateTime<Utc>,
    pub id: Uuid,
}

const EPOCH_MS: &str = "(extract(epoch FROM {c}) * 1000)::bigint";

fn ms(column: &str) -> String {
    EPOCH_MS.replace("{c}", column)
}

/// A page of a project's sessions, by id.
#[tracing::instrument(skip(db), err)]
pub async fn sessions_page(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    after: Option<Uuid>,
) -> sqlx::Result<Vec<SessionRecord>> {
    let sql = format!(
        "SELECT id, project_id, agent, external_session_id, content_session_id, agent_id, agent_type,
                platform_source, cwd, status, metadata, {} AS started_at_epoch, {} AS ended_at_epoch,
                {} AS created_at_epoch, {} AS updated_at_epoch
           FROM sessions
          WHERE project_id = $1 AND ($2::uuid IS NULL OR id > $2)
          ORDER BY id LIMIT $3",
        ms("started_at"),
        ms("ended_at"),
        ms("created_at"),
        ms("updated_at")
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .bind(after)
        .bind(BATCH as i64)
        .fetch_all(db)
        .await
}

/// A page of a project's observations, oldest first.
#[tracing::instrument(skip(db), err)]
pub async fn observations_page(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    after: Option<Cursor>,
) -> sqlx::Result<Vec<ObservationRecord>> {
    let sql = format!(
        "SELECT id, project_id, session_id, origin, kind, title, subtitle, facts, narrative, concepts,
                files_read, files_modified, content, metadata, provider, model, prompt_number,
                {} AS created_at_epoch, {} AS updated_at_epoch, created_at AS cursor_at
           FROM observations
          WHERE project_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2, $3))
          ORDER BY created_at, id LIMIT $4",
        ms("created_at"),
        ms("updated_at")
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .bind(after.map(|c| c.at))
        .bind(after.map(|c| c.id))
        .bind(BATCH as i64)
        .fetch_all(db)
        .await
}

/// A page of a project's summaries, oldest first.
#[tracing::instrument(skip(db), err)]
pub async fn summaries_page(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    after: Option<Cursor>,
) -> sqlx::Result<Vec<SummaryRecord>> {
    let sql = format!(
        "SELECT id, project_id, session_id, scope, prompt_number, request, investigated, learned,
                completed, next_steps, notes, provider, model, {} AS created_at_epoch,
                created_at AS cursor_at
           FROM summaries
          WHERE project_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2, $3))
          ORDER BY created_at, id LIMIT $4",
        ms("created_at")
    );
    sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .bind(after.map(|c| c.at))
        .bind(after.map(|c| c.id))
        .bind(BATCH as i64)
        .fetch_all(db)
        .await
}

/// The three tables a record lands in.
#[derive(Debug, Clone, Copy)]
pub enum Table {
    Sessions,
    Observations,
    Summaries,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Sessions => "sessions",
            Table::Observations => "observations",
            Table::Summaries => "summaries",
        }
    }
}

/// The id a record takes when it is written to `project_id` in place of its own.
pub fn derived_id(project_id: Uuid, id: Uuid) -> Uuid {
    Uuid::new_v5(&project_id, id.as_bytes())
}

/// The id each record id takes in `project_id`: the derived id when an
/// earlier import already wrote it or when another project holds the id,
/// the id itself otherwise.
#[tracing::instrument(skip(db, ids), fields(n = ids.len()), err)]
pub async fn target_ids(
    db: &mut PgConnection,
    table: Table,
    project_id: Uuid,
    ids: &[Uuid],
) -> sqlx::Result<HashMap<Uuid, Uuid>> {
    let derived: Vec<Uuid> = ids.iter().map(|id| derived_id(project_id, *id)).collect();
    let sql = format!(
        "SELECT u.id, u.alt,
                EXISTS (SELECT 1 FROM {t} t WHERE t.id = u.alt)
                OR EXISTS (SELECT 1 FROM {t} t WHERE t.id = u.id AND t.project_id <> $1) AS use_alt
           FROM unnest($2::uuid[], $3::uuid[]) AS u(id, alt)",
        t = table.name()
    );
    let rows: Vec<(Uuid, Uuid, bool)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(project_id)
        .bind(ids)
        .bind(&derived)
        .fetch_all(&mut *db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, alt, use_alt)| (id, if use_alt { alt } else { id }))
        .collect())
}

/// Sessions already in `project_id` under a record id (or its derived id):
/// record id → the row's id. For references to sessions not in the request.
#[tracing::instrument(skip(db, ids), fields(n = ids.len()), err)]
pub async fn existing_sessions(
    db: &mut PgConnection,
    project_id: Uuid,
    ids: &[Uuid],
) -> sqlx::Result<HashMap<Uuid, Uuid>> {
    let derived: Vec<Uuid> = ids.iter().map(|id| derived_id(project_id, *id)).collect();
    let rows: Vec<(Uuid, Uuid)> = sqlx::query_as(
        "SELECT DISTINCT ON (u.id) u.id, s.id
           FROM unnest($2::uuid[], $3::uuid[]) AS u(id, alt)
           JOIN sessions s ON s.project_id = $1 AND s.id IN (u.id, u.alt)
          ORDER BY u.id, (s.id = u.alt) DESC",
    )
    .bind(project_id)
    .bind(ids)
    .bind(&derived)
    .fetch_all(&mut *db)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Writes sessions (ids already mapped); rows that exist are left as they
/// are. Answers, per record id given, the id of the session now standing for
/// it: the same, or the project's session with the same agent and agent
/// session id.
#[tracing::instrument(skip(db, rows), fields(n = rows.len()), err)]
pub async fn insert_sessions(
    db: &mut PgConnection,
    team_id: Uuid,
    project_id: Uuid,
    rows: &[SessionRecord],
) -> sqlx::Result<(u64, HashMap<Uuid, Uuid>)> {
    let json = serde_json::to_value(rows).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let inserted = sqlx::query(
        r#"INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, content_session_id,
                                 agent_id, agent_type, platform_source, cwd, status, metadata,
                                 started_at, ended_at, created_at, updated_at)
           SELECT r.id, $1, $2, r.agent, r."externalSessionId", r."contentSessionId", r."agentId",
                  r."agentType", r."platformSource", r.cwd, r.status, coalesce(r.metadata, '{}'),
                  to_timestamp(r."startedAtEpoch" / 1000.0), to_timestamp(r."endedAtEpoch" / 1000.0),
                  to_timestamp(coalesce(r."createdAtEpoch", r."startedAtEpoch") / 1000.0),
                  to_timestamp(coalesce(r."updatedAtEpoch", r."createdAtEpoch", r."startedAtEpoch") / 1000.0)
             FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, agent text, "externalSessionId" text,
                  "contentSessionId" text, "agentId" text, "agentType" text, "platformSource" text,
                  cwd text, status text, metadata jsonb, "startedAtEpoch" bigint, "endedAtEpoch" bigint,
                  "createdAtEpoch" bigint, "updatedAtEpoch" bigint)
           ON CONFLICT DO NOTHING"#,
    )
    .bind(team_id)
    .bind(project_id)
    .bind(&json)
    .execute(&mut *db)
    .await?
    .rows_affected();
    let standing: Vec<(Uuid, Uuid)> = sqlx::query_as(
        r#"SELECT r.id, s.id
             FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, agent text, "externalSessionId" text)
             JOIN sessions s ON s.project_id = $1
                            AND (s.id = r.id OR (s.agent = r.agent AND s.external_session_id = r."externalSessionId"))
            ORDER BY (s.id = r.id)"#,
    )
    .bind(project_id)
    .bind(&json)
    .fetch_all(&mut *db)
    .await?;
    // Ordered so that a row with the record's own id wins.
    Ok((inserted, standing.into_iter().collect()))
}

/// Writes observations (ids and session ids already mapped); existing ids
/// are left as they are. The `search` column is filled by its trigger; the
/// generator's backfill gives them vectors.
#[tracing::instrument(skip(db, rows), fields(n = rows.len()), err)]
pub async fn insert_observations(
    db: &mut PgConnection,
    team_id: Uuid,
    project_id: Uuid,
    rows: &[ObservationRecord],
) -> sqlx::Result<u64> {
    let json = serde_json::to_value(rows).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    Ok(sqlx::query(
        r#"INSERT INTO observations (id, team_id, project_id, session_id, generation_key, origin, kind,
                                     title, subtitle, facts, narrative, concepts, files_read,
                                     files_modified, content, metadata, provider, model, prompt_number,
                                     created_at, updated_at)
           SELECT r.id, $1, $2, r."sessionId", 'import:' || $2::text || ':' || r.id::text, r.origin, r.kind,
                  r.title, r.subtitle, r.facts, r.narrative, r.concepts, r."filesRead",
                  r."filesModified", r.content, coalesce(r.metadata, '{}'), r.provider, r.model,
                  r."promptNumber", to_timestamp(r."createdAtEpoch" / 1000.0),
                  to_timestamp(coalesce(r."updatedAtEpoch", r."createdAtEpoch") / 1000.0)
             FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, "sessionId" uuid, origin text, kind text,
                  title text, subtitle text, facts text[], narrative text, concepts text[],
                  "filesRead" text[], "filesModified" text[], content text, metadata jsonb,
                  provider text, model text, "promptNumber" integer, "createdAtEpoch" bigint,
                  "updatedAtEpoch" bigint)
           ON CONFLICT DO NOTHING"#,
    )
    .bind(team_id)
    .bind(project_id)
    .bind(&json)
    .execute(&mut *db)
    .await?
    .rows_affected())
}

/// Writes summaries (ids and session ids already mapped); existing ids are
/// left as they are.
#[tracing::instrument(skip(db, rows), fields(n = rows.len()), err)]
pub async fn insert_summaries(
    db: &mut PgConnection,
    team_id: Uuid,
    project_id: Uuid,
    rows: &[SummaryRecord],
) -> sqlx::Result<u64> {
    let json = serde_json::to_value(rows).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    Ok(sqlx::query(
        r#"INSERT INTO summaries (id, team_id, project_id, session_id, generation_key, scope, prompt_number,
                                  request, investigated, learned, completed, next_steps, notes,
                                  provider, model, created_at)
           SELECT r.id, $1, $2, r."sessionId", 'import:' || $2::text || ':' || r.id::text, r.scope,
                  r."promptNumber", r.request, r.investigated, r.learned, r.completed, r."nextSteps",
                  r.notes, r.provider, r.model, to_timestamp(r."createdAtEpoch" / 1000.0)
             FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, "sessionId" uuid, scope text,
                  "promptNumber" integer, request text, investigated text, learned text,
                  completed text, "nextSteps" text, notes text, provider text, model text,
                  "createdAtEpoch" bigint)
           ON CONFLICT DO NOTHING"#,
    )
    .bind(team_id)
    .bind(project_id)
    .bind(&json)
    .execute(&mut *db)
    .await?
    .rows_affected())
}
