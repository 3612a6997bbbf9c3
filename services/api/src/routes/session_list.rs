//! The dashboard's session reads: a project's sessions newest first
//! (`GET /v1/sessions`), and one session's timeline turn by turn
//! (`GET /v1/sessions/{id}/timeline`), bounded to the newest 200 turns and
//! the first 500 events of each.

use std::collections::BTreeMap;

use axum::extract::State;
use cairn_shared::auth::Scope;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::{
    auth::Auth,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    state::AppState,
    store::session_views::{self, After, MAX_EVENTS_PER_TURN, MAX_TURNS, SessionSummaryRow},
};

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsQuery {
    /// Project id or slug; a project token's own project by default.
    pub project_id: Option<String>,
    /// 1..=100 (default 20).
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// One member's sessions only (a member id, as `/v1/admin/members` and `whoami` give it).
    pub member_id: Option<Uuid>,
}

/// A session and its counts.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListItem {
    pub id: Uuid,
    pub agent: String,
    pub external_session_id: String,
    pub cwd: Option<String>,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    /// The newest event's time; null before the first event.
    pub last_event_at: Option<DateTime<Utc>>,
    /// User prompts so far.
    pub turns: i32,
    pub events: i64,
    pub observations: i64,
    /// `sweeper` when the session was ended after no activity (an unclean
    /// exit: the agent never sent SessionEnd); null otherwise.
    pub ended_by: Option<String>,
    /// The member whose token opened it; null for a service token's.
    pub member_id: Option<Uuid>,
}

impl From<SessionSummaryRow> for SessionListItem {
    fn from(r: SessionSummaryRow) -> Self {
        Self {
            id: r.id,
            agent: r.agent,
            external_session_id: r.external_session_id,
            cwd: r.cwd,
            started_at: r.started_at,
            ended_at: r.ended_at,
            last_event_at: r.last_event_at,
            turns: r.turns,
            events: r.events,
            observations: r.observations,
            ended_by: r.ended_by,
            member_id: r.member_id,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionList {
    /// Newest started first.
    pub sessions: Vec<SessionListItem>,
    /// Pass as `cursor` for the next page; null on the last.
    pub next_cursor: Option<String>,
}

fn cursor_of(row: &SessionSummaryRow) -> String {
    format!("{}.{}", row.started_at.timestamp_micros(), row.id.simple())
}

fn parse_cursor(raw: &str) -> Option<After> {
    let (micros, id) = raw.split_once('.')?;
    Some(After {
        started_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
        id: Uuid::parse_str(id).ok()?,
    })
}

/// A project's sessions, newest first, with their counts (read).
#[utoipa::path(get, path = "/v1/sessions", tag = "sessions", params(ListSessionsQuery),
    responses((status = 200, body = SessionList, description = "A page of the project's sessions"),
              (status = 401, body = crate::error::ErrorBody, description = "No credentials"),
              (status = 403, body = crate::error::ErrorBody, description = "Invalid token or missing `read` scope"),
              (status = 404, body = crate::error::ErrorBody, description = "No such project for this token"),
              (status = 422, body = crate::error::ErrorBody, description = "Bad `limit` or `cursor`")),
    security(("bearer" = [])))]
pub async fn list_sessions(
    State(state): State<AppState>,
    auth: Auth,
    Query(q): Query<ListSessionsQuery>,
) -> ApiResult<Json<SessionList>> {
    auth.require(Scope::Read)?;
    let limit = q.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::unprocessable("invalid_field", "`limit` is 1..=100"));
    }
    let after = match q.cursor.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        Some(raw) => Some(parse_cursor(raw).ok_or_else(|| {
            ApiError::unprocessable("invalid_field", "`cursor` is not a cursor this API gave")
        })?),
        None => None,
    };
    let project = auth.project(&state, q.project_id.as_deref()).await?;
    let mut rows = session_views::list(
        &state.read_pool,
        project.team_id,
        project.id,
        q.member_id,
        after,
        limit + 1,
        auth.viewer(),
    )
    .await?;
    let next_cursor = if rows.len() as i64 > limit {
        rows.truncate(limit as usize);
        rows.last().map(cursor_of)
    } else {
        None
    };
    Ok(Json(SessionList {
        sessions: rows.into_iter().map(Into::into).collect(),
        next_cursor,
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEvent {
    pub id: Uuid,
    pub event_type: String,
    pub tool_name: Option<String>,
    pub occurred_at: DateTime<Utc>,
    /// It came after the sweeper had ended the session (an unclean exit)
    /// and joined the session's latest turn.
    pub after_end: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineObservation {
    pub id: Uuid,
    pub kind: String,
    pub title: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineSummary {
    pub id: Uuid,
    /// `turn` or `session`.
    pub scope: String,
    pub request: String,
    pub completed: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineJob {
    pub id: Uuid,
    pub job_type: String,
    pub status: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// What the provider reported (tokens, model), when it answered.
    #[schema(value_type = Option<Object>)]
    pub usage: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineTurn {
    /// 0 for what came before the first prompt.
    pub prompt_number: i32,
    /// A recovery turn: turn 0 holding tool events, work that came without
    /// a prompt (generated as a turn of its own when the next prompt came
    /// or the sweeper ended the session).
    pub recovery: bool,
    /// The turn's prompt, its first 500 characters; null when none was stored.
    pub prompt: Option<String>,
    pub started_at: DateTime<Utc>,
    /// All the turn's events; `events` holds at most the first 500.
    pub event_count: i64,
    pub events: Vec<TimelineEvent>,
    pub observations: Vec<TimelineObservation>,
    pub summaries: Vec<TimelineSummary>,
    pub jobs: Vec<TimelineJob>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionTimeline {
    pub session: SessionListItem,
    /// Oldest first; at most the newest 200 turns.
    pub turns: Vec<TimelineTurn>,
    /// True when the session has more turns than `turns` holds.
    pub turns_truncated: bool,
    /// Session-scope summaries.
    pub summaries: Vec<TimelineSummary>,
    /// Jobs of no turn (session summaries).
    pub jobs: Vec<TimelineJob>,
}

/// One session turn by turn: prompt, events, observations, summaries and
/// jobs (read; a session of a project the token cannot see is 404). At
/// most the newest 200 turns, and the first 500 events of each.
#[utoipa::path(get, path = "/v1/sessions/{id}/timeline", tag = "sessions", params(("id" = Uuid, Path)),
    responses((status = 200, body = SessionTimeline, description = "The session's timeline"),
              (status = 401, body = crate::error::ErrorBody, description = "No credentials"),
              (status = 403, body = crate::error::ErrorBody, description = "Invalid token or missing `read` scope"),
              (status = 404, body = crate::error::ErrorBody, description = "No such session for this token")),
    security(("bearer" = [])))]
pub async fn get_session_timeline(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<SessionTimeline>> {
    auth.require(Scope::Read)?;
    let session = session_views::one(
        &state.read_pool,
        auth.team_id,
        auth.project_filter(),
        id,
        auth.viewer(),
    )
    .await?
    .ok_or_else(|| ApiError::not_found("session_not_found", "no such session"))?;
    // A dashboard view: read from the replica when there is one.
    let (pool, project_id) = (&state.read_pool, session.project_id);
    let mut turns = session_views::turns(pool, id).await?;
    let turns_truncated = turns.len() as i64 > MAX_TURNS;
    if turns_truncated {
        turns.remove(0);
    }
    let numbers: Vec<i32> = turns.iter().map(|t| t.prompt_number).collect();
    let (events, observations, summaries, jobs) = tokio::try_join!(
        session_views::events(pool, id, &numbers),
        session_views::observations(pool, project_id, id),
        session_views::summaries(pool, project_id, id),
        session_views::jobs(pool, project_id, id),
    )?;
    let mut by_turn: BTreeMap<i32, TimelineTurn> = turns
        .into_iter()
        .map(|t| {
            let turn = TimelineTurn {
                prompt_number: t.prompt_number,
                recovery: false,
                prompt: t.prompt,
                started_at: t.started_at,
                event_count: t.event_count,
                events: Vec::new(),
                observations: Vec::new(),
                summaries: Vec::new(),
                jobs: Vec::new(),
            };
            (t.prompt_number, turn)
        })
        .collect();
    // Events after a sweeper's end came late and joined the latest turn.
    let swept_at = session
        .ended_at
        .filter(|_| session.ended_by.as_deref() == Some("sweeper"));
    for e in events {
        if let Some(turn) = by_turn.get_mut(&e.prompt_number) {
            turn.recovery |= turn.prompt_number == 0 && e.tool_name.is_some();
            turn.events.push(TimelineEvent {
                id: e.id,
                event_type: e.event_type,
                tool_name: e.tool_name,
                occurred_at: e.occurred_at,
                after_end: swept_at.is_some_and(|end| e.occurred_at > end),
            });
        }
    }
    debug_assert!(
        by_turn
            .values()
            .all(|t| t.events.len() as i64 <= MAX_EVENTS_PER_TURN)
    );
    for o in observations {
        if let Some(turn) = by_turn.get_mut(&o.prompt_number.unwrap_or(0)) {
            turn.observations.push(TimelineObservation {
                id: o.id,
                kind: o.kind,
                title: o.title,
                created_at: o.created_at,
            });
        }
    }
    let mut session_summaries = Vec::new();
    for s in summaries {
        let dto = TimelineSummary {
            id: s.id,
            scope: s.scope.clone(),
            request: s.request,
            completed: s.completed,
            created_at: s.created_at,
        };
        match (s.scope.as_str(), s.prompt_number) {
            ("turn", Some(n)) => {
                if let Some(turn) = by_turn.get_mut(&n) {
                    turn.summaries.push(dto);
                }
            }
            _ => session_summaries.push(dto),
        }
    }
    let mut session_jobs = Vec::new();
    for j in jobs {
        let dto = TimelineJob {
            id: j.id,
            job_type: j.job_type,
            status: j.status,
            attempts: j.attempts,
            last_error: j.last_error,
            usage: j.usage,
            created_at: j.created_at,
            completed_at: j.completed_at,
        };
        match j.prompt_number {
            Some(n) => {
                if let Some(turn) = by_turn.get_mut(&n) {
                    turn.jobs.push(dto);
                }
            }
            None => session_jobs.push(dto),
        }
    }
    Ok(Json(SessionTimeline {
        session: session.into(),
        turns: by_turn.into_values().collect(),
        turns_truncated,
        summaries: session_summaries,
        jobs: session_jobs,
    }))
}
