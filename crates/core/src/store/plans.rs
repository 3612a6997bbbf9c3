//! Plans as observations of kind `plan`, one per plan file per session
//! (`generation_key` = `plan:<session>:<path>`); `metadata.plan` keeps the
//! path, the version count and the approval.

use sqlx::PgConnection;
use uuid::Uuid;

use crate::tenancy::ProjectRef;

/// The session and turn a plan change happened in.
pub struct At {
    pub project: ProjectRef,
    pub session_id: Uuid,
    pub prompt_number: Option<i32>,
}

fn key(session_id: Uuid, path: &str) -> String {
    format!("plan:{session_id}:{path}")
}

/// Stores the plan file's text: a new plan, or the next version of the
/// session's plan of that file.
#[tracing::instrument(skip(conn, at, text), fields(session_id = %at.session_id))]
pub async fn write(
    conn: &mut PgConnection,
    at: &At,
    path: &str,
    title: &str,
    text: &str,
) -> sqlx::Result<()> {
    upsert(conn, at, Some(path), title, text, false).await
}

/// A plan of `at`'s session (by `path`, else the session's approved plan
/// without a file), inserted or its next version.
async fn upsert(
    conn: &mut PgConnection,
    at: &At,
    path: Option<&str>,
    title: &str,
    text: &str,
    approved: bool,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, origin, kind, title,
             narrative, files_modified, prompt_number, metadata)
         VALUES ($1, $2, $3, $4, $5, 'generated', 'plan', $6, $7,
                 CASE WHEN $8::text IS NULL THEN '{}'::text[] ELSE ARRAY[$8::text] END, $9,
                 jsonb_build_object('plan', jsonb_build_object('path', $8::text, 'versions', 1, 'approved', $10)
                     || CASE WHEN $10 THEN jsonb_build_object('approved_at', now()) ELSE '{}'::jsonb END))
         ON CONFLICT (generation_key) DO UPDATE SET
             title = EXCLUDED.title, narrative = EXCLUDED.narrative, prompt_number = EXCLUDED.prompt_number,
             metadata = jsonb_set(observations.metadata, '{plan,versions}',
                 to_jsonb(coalesce((observations.metadata #>> '{plan,versions}')::int, 1) + 1)),
             updated_at = now()
         WHERE observations.project_id = EXCLUDED.project_id",
    )
    .bind(Uuid::now_v7())
    .bind(at.project.team_id)
    .bind(at.project.id)
    .bind(at.session_id)
    .bind(key(at.session_id, path.unwrap_or("approved")))
    .bind(title)
    .bind(text)
    .bind(path)
    .bind(at.prompt_number)
    .bind(approved)
    .execute(conn)
    .await?;
    Ok(())
}

/// Applies an Edit of the plan file to the stored plan (its first
/// occurrence of `old`); an edit of a plan never stored is ignored.
#[tracing::instrument(skip(conn, at, old, new), fields(session_id = %at.session_id))]
pub async fn edit(conn: &mut PgConnection, at: &At, path: &str, old: &str, new: &str) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE observations SET
             narrative = overlay(narrative PLACING $4 FROM strpos(narrative, $3) FOR length($3)),
             prompt_number = coalesce($5, prompt_number),
             metadata = jsonb_set(metadata, '{plan,versions}',
                 to_jsonb(coalesce((metadata #>> '{plan,versions}')::int, 1) + 1)),
             updated_at = now()
         WHERE project_id = $1 AND generation_key = $2 AND $3 <> '' AND strpos(narrative, $3) > 0",
    )
    .bind(at.project.id)
    .bind(key(at.session_id, path))
    .bind(old)
    .bind(new)
    .bind(at.prompt_number)
    .execute(conn)
    .await?;
    Ok(())
}

/// The user approved `text` (ExitPlanMode): it becomes the text of the
/// session's most recently written plan, marked approved; with no plan file
/// in the session, the approved plan is stored on its own.
#[tracing::instrument(skip(conn, at, text), fields(session_id = %at.session_id))]
pub async fn approve(conn: &mut PgConnection, at: &At, title: &str, text: &str) -> sqlx::Result<()> {
    let approved = sqlx::query(
        "UPDATE observations SET narrative = $3, title = $4, prompt_number = coalesce($5, prompt_number),
             metadata = jsonb_set(jsonb_set(metadata, '{plan,approved}', 'true'),
                                  '{plan,approved_at}', to_jsonb(now())),
             updated_at = now()
         WHERE id = (SELECT id FROM observations
                     WHERE project_id = $1 AND session_id = $2 AND kind = 'plan'
                       AND generation_key LIKE 'plan:%'
                     ORDER BY updated_at DESC, id DESC LIMIT 1)",
    )
    .bind(at.project.id)
    .bind(at.session_id)
    .bind(text)
    .bind(title)
    .bind(at.prompt_number)
    .execute(&mut *conn)
    .await?;
    if approved.rows_affected() == 0 {
        upsert(conn, at, None, title, text, true).await?;
    }
    Ok(())
}
