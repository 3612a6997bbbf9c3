//! Sessions: one per project, agent and the agent's own session id.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor, prelude::FromRow};
use uuid::Uuid;

use crate::tenancy::ProjectRef;

#[derive(Clone, Debug, FromRow)]
pub struct SessionRow {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub agent: String,
    pub external_session_id: String,
    pub content_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub platform_source: Option<String>,
    pub cwd: Option<String>,
    pub status: String,
    pub generation_status: String,
    pub prompt_counter: i32,
    pub private_prompt_number: Option<i32>,
    pub last_prompt_hash: Option<String>,
    pub metadata: serde_json::Value,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub last_generated_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The member whose agent opened it, and the token it was opened with.
    pub member_id: Option<Uuid>,
    pub token_id: Option<Uuid>,
}

impl SessionRow {
    /// Whether `actor` opened this session: its token, or another token of
    /// the same member (their other laptop).
    pub fn opened_by(&self, actor: crate::ingest::Actor) -> bool {
        (self.token_id.is_some() && self.token_id == actor.token_id)
            || (self.member_id.is_some() && self.member_id == actor.member_id)
    }
}

macro_rules! columns {
    () => {
        "id, team_id, project_id, agent, external_session_id, content_session_id, agent_id, agent_type,
         platform_source, cwd, status, generation_status, prompt_counter, private_prompt_number,
         last_prompt_hash, metadata, started_at, ended_at, last_generated_at, created_at, updated_at, member_id,
         token_id"
    };
}

/// Identity and descriptive fields of a session as an agent reports it.
#[derive(Clone, Debug, Default)]
pub struct SessionKey {
    pub agent: String,
    pub external_session_id: String,
    pub content_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub platform_source: Option<String>,
    pub cwd: Option<String>,
    pub metadata: Option<serde_json::Value>,
    /// Hash of the user prompt that opens a new turn.
    pub prompt_hash: Option<String>,
    /// Who opens it: kept from the first writer that names one.
    pub actor: crate::ingest::Actor,
}

/// What an event does to its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionChange {
    None,
    /// SessionStart: (re)open it.
    Open,
    /// A user prompt: a new turn; `private` when the prompt was entirely private.
    NewTurn {
        private: bool,
    },
    /// SessionEnd.
    Close,
}

/// Finds or creates the session and applies the change, returning the row
/// after it. `inserted` says whether it was created.
pub async fn upsert(
    conn: &mut PgConnection,
    project: ProjectRef,
    key: &SessionKey,
    change: SessionChange,
) -> sqlx::Result<(SessionRow, bool)> {
    if change == SessionChange::None
        && let Some(row) = find_by_key(&mut *conn, project, &key.agent, &key.external_session_id).await?
    {
        return Ok((row, false));
    }
    let (new_turn, private) = match change {
        SessionChange::NewTurn { private } => (true, private),
        _ => (false, false),
    };
    let status = if change == SessionChange::Close {
        "ended"
    } else {
        "active"
    };
    sqlx::query_as::<_, SessionWithInsert>(concat!(
        "INSERT INTO sessions AS s (id, team_id, project_id, agent, external_session_id, content_session_id,
             agent_id, agent_type, platform_source, cwd, metadata, prompt_counter, private_prompt_number,
             status, ended_at, last_prompt_hash, member_id, token_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce($11, '{}'::jsonb),
             CASE WHEN $12 THEN 1 ELSE 0 END, CASE WHEN $13 THEN 1 END,
             $14, CASE WHEN $14 = 'ended' THEN now() END, $16, $17, $18)
         ON CONFLICT (project_id, agent, external_session_id) DO UPDATE SET
             content_session_id = coalesce(s.content_session_id, EXCLUDED.content_session_id),
             agent_id = coalesce(EXCLUDED.agent_id, s.agent_id),
             agent_type = coalesce(EXCLUDED.agent_type, s.agent_type),
             platform_source = coalesce(EXCLUDED.platform_source, s.platform_source),
             cwd = coalesce(EXCLUDED.cwd, s.cwd),
             metadata = s.metadata || coalesce($11, '{}'::jsonb),
             prompt_counter = s.prompt_counter + CASE WHEN $12 THEN 1 ELSE 0 END,
             private_prompt_number = CASE WHEN $13 THEN s.prompt_counter + 1 ELSE s.private_prompt_number END,
             last_prompt_hash = CASE WHEN $12 THEN $16 ELSE s.last_prompt_hash END,
             status = CASE WHEN $15 THEN EXCLUDED.status ELSE s.status END,
             ended_at = CASE WHEN $15 THEN EXCLUDED.ended_at ELSE s.ended_at END,
             member_id = coalesce(s.member_id, EXCLUDED.member_id),
             token_id = coalesce(s.token_id, EXCLUDED.token_id),
             updated_at = now()
         RETURNING ",
        columns!(),
        ", (xmax = 0) AS inserted"
    ))
    .bind(Uuid::now_v7())
    .bind(project.team_id)
    .bind(project.id)
    .bind(&key.agent)
    .bind(&key.external_session_id)
    .bind(&key.content_session_id)
    .bind(&key.agent_id)
    .bind(&key.agent_type)
    .bind(&key.platform_source)
    .bind(&key.cwd)
    .bind(&key.metadata)
    .bind(new_turn)
    .bind(private)
    .bind(status)
    .bind(matches!(
        change,
        SessionChange::Open | SessionChange::Close | SessionChange::NewTurn { .. }
    ))
    .bind(&key.prompt_hash)
    .bind(key.actor.member_id)
    .bind(key.actor.token_id)
    .fetch_one(conn)
    .await
    .map(|r| (r.session, r.inserted))
}

#[derive(FromRow)]
struct SessionWithInsert {
    #[sqlx(flatten)]
    session: SessionRow,
    inserted: bool,
}

macro_rules! by_key {
    () => {
        concat!(
            "SELECT ",
            columns!(),
            " FROM sessions WHERE project_id = $1 AND agent = $2 AND external_session_id = $3"
        )
    };
}

/// A session by its identity (project, agent, the agent's session id).
pub async fn find_by_key(
    db: impl PgExecutor<'_>,
    project: ProjectRef,
    agent: &str,
    external_session_id: &str,
) -> sqlx::Result<Option<SessionRow>> {
    fetch_by_key(db, by_key!(), project, agent, external_session_id).await
}

/// Like [`find_by_key`], locking the row for the rest of the transaction.
#[tracing::instrument(skip(conn), err)]
pub async fn find_by_key_for_update(
    conn: &mut PgConnection,
    project: ProjectRef,
    agent: &str,
    external_session_id: &str,
) -> sqlx::Result<Option<SessionRow>> {
    fetch_by_key(
        conn,
        concat!(by_key!(), " FOR UPDATE"),
        project,
        agent,
        external_session_id,
    )
    .await
}

async fn fetch_by_key(
    db: impl PgExecutor<'_>,
    sql: &'static str,
    project: ProjectRef,
    agent: &str,
    external_session_id: &str,
) -> sqlx::Result<Option<SessionRow>> {
    sqlx::query_as(sql)
        .bind(project.id)
        .bind(agent)
        .bind(external_session_id)
        .fetch_optional(db)
        .await
}

/// The turn ended: its prompt no longer marks a retry (see `ingest::write`).
#[tracing::instrument(skip(db), err)]
pub async fn close_turn_prompt(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<()> {
    sqlx::query("UPDATE sessions SET last_prompt_hash = NULL WHERE id = $1 AND last_prompt_hash IS NOT NULL")
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// The most recent session of the project with this content session id.
pub async fn find_by_content_id(
    db: impl PgExecutor<'_>,
    project: ProjectRef,
    content_session_id: &str,
) -> sqlx::Result<Option<SessionRow>> {
    sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        " FROM sessions WHERE project_id = $1 AND content_session_id = $2 ORDER BY created_at DESC LIMIT 1"
    ))
    .bind(project.id)
    .bind(content_session_id)
    .fetch_optional(db)
    .await
}

/// A session of the caller's team (and project, for project tokens).
pub async fn get(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Option<Uuid>,
    id: Uuid,
) -> sqlx::Result<Option<SessionRow>> {
    sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        " FROM sessions WHERE id = $1 AND team_id = $2 AND ($3::uuid IS NULL OR project_id = $3)"
    ))
    .bind(id)
    .bind(team_id)
    .bind(project_id)
    .fetch_optional(db)
    .await
}

pub async fn mark_ended(db: impl PgExecutor<'_>, id: Uuid) -> sqlx::Result<SessionRow> {
    sqlx::query_as(concat!(
        "UPDATE sessions SET status = 'ended', ended_at = coalesce(ended_at, now()), updated_at = now()
         WHERE id = $1 RETURNING ",
        columns!()
    ))
    .bind(id)
    .fetch_one(db)
    .await
}
