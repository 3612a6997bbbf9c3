//! `POST /v1/hooks/{agent}`: agents' native hooks (through `cairn hook`, or
//! Claude Code's own `http` hooks) post here and get their native answer back.

use axum::{extract::State, http::HeaderMap};
use cairn_core::memory::lifecycle::read::{self, FileSeen};
use cairn_shared::{auth::Scope, tenancy::project_rules::Locator, time::from_epoch_ms};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::{
    auth::{Auth, ProjectRef},
    context::{self, ContextRequest, Mode},
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query, RawBody},
    ingest::{
        self, EventKind, IncomingEvent, SessionTarget,
        agents::{HookAgent, HookRequest, Moment, ParsedHook},
    },
    state::AppState,
    store::code::{self, Checkout},
};

/// Changed files of a session's start read from the query, at most.
const MAX_CHANGED: usize = 50;

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct HookQuery {
    /// Project id or slug; with a team token it wins over the rules below,
    /// with a project token it must be the token's own.
    pub project: Option<String>,
    /// The `origin` remote of the agent's repository, for a team's git-remote rules.
    pub git_remote: Option<String>,
    /// The repository's main worktree root, for path-prefix rules.
    pub repo_root: Option<String>,
    /// The agent's working directory (default: the hook body's own).
    pub cwd: Option<String>,
    /// The checkout's HEAD commit (hex), kept on the session at its start and each prompt.
    pub head: Option<String>,
    /// The checked-out branch.
    pub branch: Option<String>,
    /// At a session's start: the files changed in the worktree, relative to
    /// it, one a line (at most 50 are read). Their memories lead the context.
    pub changed: Option<String>,
    /// After a tool ran on a file: the SHA-256 (hex) of the file's content
    /// then. A Read that finds a version the project's memories of the file
    /// were not drawn from marks them stale.
    pub file_hash: Option<String>,
}

impl HookQuery {
    pub fn locator(&self, body_cwd: Option<&str>) -> Locator {
        Locator {
            git_remote: self.git_remote.clone(),
            repo_root: self.repo_root.clone(),
            cwd: self.cwd.clone().or_else(|| body_cwd.map(str::to_string)),
        }
    }

    /// The repository checkout the query names; a malformed commit id is dropped.
    pub fn checkout(&self) -> Option<Checkout> {
        let head = self
            .head
            .clone()
            .filter(|h| (7..=64).contains(&h.len()) && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(|h| h.to_ascii_lowercase());
        let checkout = Checkout {
            remote: self.git_remote.clone(),
            root: self.repo_root.clone(),
            head,
            branch: self.branch.clone().filter(|b| !b.is_empty() && b.len() <= 256),
        };
        (checkout != Checkout::default()).then_some(checkout)
    }

    /// The changed files the query names, each relative to the worktree and,
    /// when the repository root is known, also joined to it (memories keep
    /// paths as the agent gave them).
    pub fn changed_files(&self) -> Vec<String> {
        let root = self.repo_root.as_deref().map(|r| r.trim_end_matches('/'));
        self.changed
            .as_deref()
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|p| !p.is_empty() && p.len() <= 4096)
            .take(MAX_CHANGED)
            .flat_map(|p| {
                let joined = root.filter(|r| !r.is_empty()).map(|r| format!("{r}/{p}"));
                std::iter::once(p.to_string()).chain(joined)
            })
            .collect()
    }

    /// The version of the tool's file `event` reports, when the query carries
    /// a well-formed hash and the event is a file tool's result.
    pub fn file_seen(&self, event: &IncomingEvent) -> Option<FileSeen> {
        let hash = self
            .file_hash
            .as_deref()
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))?;
        if event.kind != EventKind::PostTool {
            return None;
        }
        let path = context::file_memories::target(event.tool_name.as_deref(), &event.payload)?;
        Some(FileSeen {
            path: cairn_shared::paths::relative(path, body_cwd(event)).to_string(),
            hash: hash.to_ascii_lowercase(),
            // The agent's own edits are the completion's to re-mark (superseded or stale).
            recheck: event.tool_name.as_deref() == Some("Read"),
        })
    }
}

/// Stores the event; at a session's start and at each prompt, also the
/// checkout the agent works on (an error there is logged, never fails the hook).
async fn store(
    state: &AppState,
    project: ProjectRef,
    event: IncomingEvent,
    query: &HookQuery,
) -> ApiResult<()> {
    let at_boundary = matches!(event.kind, EventKind::SessionStart | EventKind::UserPrompt);
    let seen = query.file_seen(&event);
    let outcome = ingest::ingest_one(state, project, event).await?;
    let Some(session) = outcome.session.as_ref() else {
        return Ok(());
    };
    if let (true, Some(checkout)) = (at_boundary, query.checkout())
        && let Err(e) = code::record(&state.pool, project.id, session.id, &checkout).await
    {
        tracing::warn!(error = %e, "could not record the session's checkout");
    }
    if let Some(seen) = seen
        && let Err(e) = read::file_seen(&state.pool, project.id, session.id, &seen).await
    {
        tracing::warn!(error = %e, "could not record the file's version");
    }
    Ok(())
}

/// Receive one agent hook event.
///
/// The body is the agent's own hook JSON: `claude-code`, `cursor`, `codex`,
/// `gemini` or `windsurf` (docs/agents.md). Every agent's events are stored
/// in one model (Claude Code's event names and fields). The answer is in the
/// agent's own hook output format: at session start it carries the project's
/// memory (`hookSpecificOutput.additionalContext`; Cursor's
/// `additional_context`); Windsurf, which takes no context from hooks, gets
/// `memoryMarkdown` on each prompt for `cairn hook` to write into its rules.
/// `Idempotency-Key` makes a retry or a spool replay store nothing twice;
/// `X-Cairn-Occurred-At` (epoch ms) dates a replayed event.
#[utoipa::path(
    post,
    path = "/v1/hooks/{agent}",
    tag = "ingest",
    params(
        ("agent" = String, Path, description = "`claude-code`, `cursor`, `codex`, `gemini` or `windsurf`"),
        ("Idempotency-Key" = Option<String>, Header, description = "The client's key for this event"),
        ("X-Cairn-Occurred-At" = Option<i64>, Header, description = "When the event happened, epoch ms"),
        HookQuery
    ),
    request_body(content = crate::dto::HookInput, description = "The agent's native hook input"),
    responses(
        (status = 200, description = "Hook output, in the agent's format", body = crate::dto::HookOutput),
        (status = 404, description = "Unknown agent (`unknown_agent`), project (`project_not_found`), or no rule for this directory (`project_unresolved`)", body = crate::error::ErrorBody),
        (status = 413, description = "Body over the limit", body = crate::error::ErrorBody),
        (status = 422, description = "Missing or mistyped field", body = crate::error::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub async fn post_hook(
    State(state): State<AppState>,
    auth: Auth,
    Path(agent): Path<String>,
    Query(query): Query<HookQuery>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> ApiResult<Json<serde_json::Value>> {
    let agent = HookAgent::from_slug(&agent).ok_or_else(|| {
        ApiError::not_found(
            "unknown_agent",
            format!("no adapter for agent `{agent}`; known: claude-code, cursor, codex, gemini, windsurf"),
        )
    })?;
    auth.require(Scope::Ingest)?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let request = HookRequest {
        body: &body,
        idempotency_key: header("idempotency-key").filter(|k| !k.is_empty() && k.len() <= 200),
        occurred_at: occurred_at(header("x-cairn-occurred-at"), Utc::now()),
    };
    let ParsedHook {
        mut event,
        agent_event,
        moment,
        source,
    } = agent.parse(&request)?;
    if header("x-cairn-replay").is_some() {
        event.metadata["replayed"] = true.into();
    }
    event.actor = auth.actor();
    let (project, _) = auth
        .project_at(&state, query.project.as_deref(), &query.locator(body_cwd(&event)))
        .await?;
    let context = match agent.takes_context(moment) {
        Some(Moment::SessionStart) => {
            let mode = Mode::for_source(source.as_deref());
            let changed = query.changed_files();
            store(&state, project, event, &query).await?;
            let request = ContextRequest {
                project_id: project.id,
                query: None,
                budget_tokens: None,
                max_tokens: Some(agent.context_cap_tokens()),
                mode,
                as_of: None,
                branch: query.branch.as_deref(),
                changed: &changed,
                viewer: auth.viewer(),
            };
            Some(session_start_context(&state, &request).await?)
        }
        // Related memories are looked up while the event is stored, within their deadline.
        Some(Moment::UserPrompt) => {
            let (prompt, _) = state
                .privacy
                .filter_text(event.prompt.as_deref().unwrap_or_default());
            let related = context::prompt::related(
                &state,
                project.id,
                &prompt,
                state.config.prompt_context_deadline,
                auth.viewer(),
            );
            let (stored, related) = tokio::join!(store(&state, project, event, &query), related);
            stored?;
            related
        }
        // Memories about the tool's file, looked up while the event is stored.
        Some(Moment::PreTool) => {
            match context::file_memories::target(event.tool_name.as_deref(), &event.payload)
                .map(str::to_owned)
            {
                Some(path) => {
                    let cwd = body_cwd(&event).map(str::to_owned);
                    let about = context::file_memories::for_file(
                        &state.pool,
                        project.id,
                        &path,
                        cwd.as_deref(),
                        state.config.file_memories_deadline,
                        auth.viewer(),
                    );
                    let (stored, about) = tokio::join!(store(&state, project, event, &query), about);
                    stored?;
                    about
                }
                None => {
                    store(&state, project, event, &query).await?;
                    None
                }
            }
        }
        _ => {
            store(&state, project, event, &query).await?;
            None
        }
    };
    Ok(Json(agent.answer(&agent_event, context)))
}

/// The SessionStart context, gathered from the read pool; when that fails
/// (a replica away or restarting), from the primary, so the hook's answer
/// does not depend on the replica.
async fn session_start_context(state: &AppState, request: &ContextRequest<'_>) -> ApiResult<String> {
    let built = match context::build(state, request).await {
        Err(e) if e.status.is_server_error() => {
            tracing::warn!(error = %e.message, "SessionStart context: the read pool failed; reading the primary");
            context::build_from(state, &state.pool, request).await?
        }
        built => built?,
    };
    Ok(built.selection.markdown)
}

fn body_cwd(event: &IncomingEvent) -> Option<&str> {
    match &event.session {
        SessionTarget::Agent(key) => key.cwd.as_deref(),
        _ => None,
    }
}

/// The client's time for a replayed event, when plausible (up to 30 days
/// old, at most 5 minutes ahead); else now.
fn occurred_at(header: Option<&str>, now: DateTime<Utc>) -> DateTime<Utc> {
    header
        .and_then(|v| v.trim().parse::<i64>().ok())
        .and_then(from_epoch_ms)
        .filter(|t| *t > now - Duration::days(30) && *t < now + Duration::minutes(5))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replayed_times_are_kept_when_plausible() {
        let now = Utc::now();
        let hour_ago = now - Duration::hours(1);
        let ms = hour_ago.timestamp_millis().to_string();
        assert_eq!(
            occurred_at(Some(&ms), now).timestamp_millis(),
            hour_ago.timestamp_millis()
        );
        assert_eq!(occurred_at(Some("nonsense"), now), now);
        let far = (now + Duration::days(1)).timestamp_millis().to_string();
        assert_eq!(occurred_at(Some(&far), now), now);
        assert_eq!(occurred_at(Some("0"), now), now);
    }
}
