//! Teams, projects and tokens as the admin API shows them (never a secret).

use cairn_shared::{
    tenancy::{ApiToken, Project, Team},
    time::{opt_epoch_ms, to_epoch_ms},
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamDto {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    pub created_at_epoch: i64,
}

impl From<Team> for TeamDto {
    fn from(t: Team) -> Self {
        Self {
            id: t.id,
            slug: t.slug,
            name: t.name,
            created_at_epoch: to_epoch_ms(t.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDto {
    pub id: Uuid,
    pub team_id: Uuid,
    pub slug: String,
    pub name: String,
    pub settings: serde_json::Value,
    /// The SessionStart context is fitted to this many tokens.
    pub context_budget_tokens: i32,
    /// UserPromptSubmit answers with related memories (opt-in).
    pub prompt_context: bool,
    pub prompt_context_budget_tokens: i32,
    /// PreToolUse answers with memories about the tool's file (on by default).
    pub file_memories: bool,
    /// Observations older than this many days and not retrieved since are
    /// archived (kept, found by id, never injected or searched); `null`: kept for ever.
    pub retention_days: Option<i32>,
    pub created_at_epoch: i64,
    /// `team` or `private-first`.
    pub memory_visibility: String,
    pub promote_kinds: Vec<String>,
    pub promote_after_days: Option<i32>,
    /// Raw events (not memories) are dropped this many days after arrival,
    /// once digested; `null`: the deployment's `CAIRN_RAW_EVENT_RETENTION_DAYS`,
    /// 0: kept for ever.
    pub raw_event_retention_days: Option<i32>,
}

impl From<Project> for ProjectDto {
    fn from(p: Project) -> Self {
        Self {
            id: p.id,
            team_id: p.team_id,
            slug: p.slug,
            name: p.name,
            settings: p.settings,
            context_budget_tokens: p.context_budget_tokens,
            prompt_context: p.prompt_context,
            prompt_context_budget_tokens: p.prompt_context_budget_tokens,
            file_memories: p.file_memories,
            memory_visibility: p.memory_visibility,
            promote_kinds: p.promote_kinds,
            promote_after_days: p.promote_after_days,
            raw_event_retention_days: p.raw_event_retention_days,
            retention_days: p.retention_days,
            created_at_epoch: to_epoch_ms(p.created_at),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenDto {
    pub id: Uuid,
    pub team_id: Uuid,
    pub project_id: Option<Uuid>,
    pub name: String,
    pub scopes: Vec<String>,
    pub expires_at_epoch: Option<i64>,
    pub revoked_at_epoch: Option<i64>,
    pub last_used_at_epoch: Option<i64>,
    pub created_at_epoch: i64,
}

impl From<ApiToken> for TokenDto {
    fn from(t: ApiToken) -> Self {
        Self {
            id: t.id,
            team_id: t.team_id,
            project_id: t.project_id,
            name: t.name,
            scopes: t.scopes,
            expires_at_epoch: opt_epoch_ms(t.expires_at),
            revoked_at_epoch: opt_epoch_ms(t.revoked_at),
            last_used_at_epoch: opt_epoch_ms(t.last_used_at),
            created_at_epoch: to_epoch_ms(t.created_at),
        }
    }
}
