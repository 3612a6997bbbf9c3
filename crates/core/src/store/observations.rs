//! Observations (generated, or manual memories) and summaries, as the API reads them.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, prelude::FromRow};
use uuid::Uuid;

use crate::memory::lifecycle::MemoryState;

use crate::tenancy::ProjectRef;

#[derive(Clone, Debug, FromRow)]
pub struct ObservationRow {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Uuid,
    pub session_id: Option<Uuid>,
    pub origin: String,
    pub kind: String,
    pub title: String,
    pub subtitle: String,
    pub facts: Vec<String>,
    pub narrative: String,
    pub concepts: Vec<String>,
    pub files_read: Vec<String>,
    pub files_modified: Vec<String>,
    pub content: String,
    pub metadata: serde_json::Value,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub prompt_number: Option<i32>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// `None` where a query does not read it.
    #[sqlx(default)]
    pub state: Option<MemoryState>,
}

macro_rules! columns {
    () => {
        "id, team_id, project_id, session_id, origin, kind, title, subtitle, facts, narrative, concepts,
         files_read, files_modified, content, metadata, provider, model, prompt_number, created_at, updated_at,
         state"
    };
}

pub struct NewMemory<'a> {
    pub project: ProjectRef,
    pub author_token_id: Uuid,
    pub session_id: Option<Uuid>,
    pub kind: &'a str,
    pub title: &'a str,
    pub content: &'a str,
    pub metadata: &'a serde_json::Value,
}

/// A memory written by hand: an observation of origin `manual`, its author
/// the writing token's member (none for a service token). The team's, even
/// in a private-first project (migration 0028): writing one is sharing it.
#[tracing::instrument(skip(db, m), fields(project_id = %m.project.id), err)]
pub async fn insert_manual(db: impl PgExecutor<'_>, m: NewMemory<'_>) -> sqlx::Result<ObservationRow> {
    let id = Uuid::now_v7();
    sqlx::query_as(concat!(
        "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, origin, kind, title,
             narrative, content, metadata, provider, author_token_id, member_id)
         VALUES ($1, $2, $3, $4, 'manual:' || $1, 'manual', $5, $6, $7, $7, $8, 'manual', $9,
                 (SELECT member_id FROM api_tokens WHERE id = $9))
         RETURNING ",
        columns!()
    ))
    .bind(id)
    .bind(m.project.team_id)
    .bind(m.project.id)
    .bind(m.session_id)
    .bind(m.kind)
    .bind(m.title)
    .bind(m.content)
    .bind(m.metadata)
    .bind(m.author_token_id)
    .fetch_one(db)
    .await
}

/// What deciding a deletion needs to know about a memory.
#[derive(Debug, FromRow)]
pub struct DeletionTarget {
    pub project_id: Uuid,
    pub origin: String,
    pub kind: String,
    pub title: String,
    pub author_token_id: Option<Uuid>,
}

/// Locks a memory the caller can see, for deletion; `None` when there is none.
#[tracing::instrument(skip(db), err)]
pub async fn lock_for_deletion(
    db: impl PgExecutor<'_>,
    team_id: Uuid,
    project_id: Option<Uuid>,
    id: Uuid,
) -> sqlx::Result<Option<DeletionTarget>> {
    sqlx::query_as(
        "SELECT project_id, origin, kind, title, author_token_id FROM observations
         WHERE id = $1 AND team_id = $2 AND ($3::uuid IS NULL OR project_id = $3) FOR UPDATE",
    )
    .bind(id)
    .bind(team_id)
    .bind(project_id)
    .fetch_optional(db)
    .await
}

#[tracing::instrument(skip(db), err)]
pub async fn delete(db: impl PgExecutor<'_>, project_id: Uuid, id: Uuid) -> sqlx::Result<bool> {
    let done = sqlx::query("DELETE FROM observations WHERE id = $1 AND project_id = $2")
        .bind(id)
        .bind(project_id)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Observations written by the job an event fed.
pub async fn for_job(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    job_id: Uuid,
) -> sqlx::Result<Vec<ObservationRow>> {
    sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        " FROM observations WHERE project_id = $1 AND job_id = $2 ORDER BY created_at, id"
    ))
    .bind(project_id)
    .bind(job_id)
    .fetch_all(db)
    .await
}

/// The project's newest observations.
pub async fn recent(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    limit: i64,
) -> sqlx::Result<Vec<ObservationRow>> {
    sqlx::query_as(concat!(
        "SELECT ",
        columns!(),
        " FROM observations WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
    ))
    .bind(project_id)
    .bind(limit)
    .fetch_all(db)
    .await
}

#[derive(Clone, Debug, FromRow)]
pub struct SummaryRow {
    pub id: Uuid,
    pub session_id: Uuid,
    pub scope: String,
    pub prompt_number: Option<i32>,
    pub request: String,
    pub learned: String,
    pub completed: String,
    pub next_steps: String,
    pub created_at: DateTime<Utc>,
}

pub async fn recent_summaries(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    limit: i64,
) -> sqlx::Result<Vec<SummaryRow>> {
    sqlx::query_as(
        "SELECT id, session_id, scope, prompt_number, request, learned, completed, next_steps, created_at
         FROM summaries WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(project_id)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// The project's observations with these ids, in the order asked; unknown ids are skipped.
pub async fn by_ids(
    db: impl PgExecutor<'_>,
    project_id: Uuid,
    ids: &[Uuid],
    viewer: crate::tenancy::Viewer,
) -> sqlx::Result<Vec<ObservationRow>> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT o.id, o.team_id, o.project_id, o.session_id, o.origin, o.kind, o.title, o.subtitle, o.facts,
                o.narrative, o.concepts, o.files_read, o.files_modified, o.content, o.metadata, o.provider,
                o.model, o.prompt_number, o.created_at, o.updated_at, o.state
         FROM unnest($2::uuid[]) WITH ORDINALITY AS asked(id, position)
         JOIN observations o ON o.id = asked.id AND o.project_id = $1 AND {}
         ORDER BY asked.position",
        crate::tenancy::Viewer::condition("o", 3, 4)
    )))
    .bind(project_id)
    .bind(ids)
    .bind(viewer.member_id)
    .bind(viewer.sees_all)
    .fetch_all(db)
    .await
}

/// An edit of an observation's text: the fields given (`Some`) replace theirs.
#[derive(Debug, Default)]
pub struct Edit<'a> {
    pub title: Option<&'a str>,
    pub subtitle: Option<&'a str>,
    pub narrative: Option<&'a str>,
    pub facts: Option<&'a [String]>,
    pub concepts: Option<&'a [String]>,
    pub kind: Option<&'a str>,
}

/// Applies `edit` (in the caller's transaction) and deletes the memory's
/// stored vector, so the generator's backfill embeds the new text. The
/// trigger of migration 0003 recomputes `search`; a manual memory's
/// `content` (its text as written) follows its narrative.
#[tracing::instrument(skip(db, edit), err)]
pub async fn update(
    db: &mut sqlx::PgConnection,
    project_id: Uuid,
    id: Uuid,
    edit: &Edit<'_>,
) -> sqlx::Result<Option<ObservationRow>> {
    let row: Option<ObservationRow> = sqlx::query_as(concat!(
        "UPDATE observations SET
             title = coalesce($3, title),
             subtitle = coalesce($4, subtitle),
             narrative = coalesce($5, narrative),
             content = CASE WHEN $5::text IS NOT NULL AND origin = 'manual' THEN $5 ELSE content END,
             facts = coalesce($6, facts),
             concepts = coalesce($7, concepts),
             kind = coalesce($8, kind),
             updated_at = now()
         WHERE id = $1 AND project_id = $2
         RETURNING ",
        columns!()
    ))
    .bind(id)
    .bind(project_id)
    .bind(edit.title)
    .bind(edit.subtitle)
    .bind(edit.narrative)
    .bind(edit.facts)
    .bind(edit.concepts)
    .bind(edit.kind)
    .fetch_optional(&mut *db)
    .await?;
    if row.is_some() {
        sqlx::query("DELETE FROM observation_embeddings WHERE observation_id = $1 AND project_id = $2")
            .bind(id)
            .bind(project_id)
            .execute(&mut *db)
            .await?;
    }
    Ok(row)
}
