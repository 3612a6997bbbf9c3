//! Every route and the OpenAPI document come from this one list, so the spec
//! cannot drift from the handlers.

pub mod admin;
pub mod ask;
pub mod context;
pub mod events;
pub mod feedback;
pub mod health;
pub mod hooks;
pub mod jobs;
pub mod live;
pub mod memories;
pub mod memory_changes;
pub mod memory_digest;
pub mod memory_edit;
pub mod projects;
pub mod queue;
pub mod search;
pub mod session_list;
pub mod sessions;
pub mod transfer;
pub mod usage;
pub mod visibility;
pub mod whoami;

use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    info(title = "Cairn", description = "Team-hosted memory server for coding agents."),
    tags(
        (name = "ingest", description = "Agents' native hooks"),
        (name = "sessions", description = "Agent sessions: start, end, list, timeline"),
        (name = "events", description = "Events stored one by one or in batches"),
        (name = "jobs", description = "Generation jobs: list, retry, cancel"),
        (name = "memories", description = "Memories written by hand, edited, deleted"),
        (name = "memory", description = "Memory given back: context, search, timeline"),
        (name = "projects", description = "A project's memory: purge, export, import, usage"),
        (name = "admin", description = "Teams, projects, tokens, audit log"),
        (name = "health", description = "Liveness, readiness, health and runtime info"),
    )
)]
struct ApiDoc;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(health::healthz))
        .routes(routes!(health::readiness))
        .routes(routes!(health::health))
        .routes(routes!(health::info))
        .routes(routes!(hooks::post_hook))
        .routes(routes!(whoami::whoami, whoami::revoke_self))
        .routes(routes!(whoami::resolve_project))
        .routes(routes!(sessions::start_session))
        .routes(routes!(sessions::get_session))
        .routes(routes!(sessions::end_session))
        .routes(routes!(session_list::list_sessions))
        .routes(routes!(session_list::get_session_timeline))
        .routes(routes!(live::get_live))
        .routes(routes!(events::post_event))
        .routes(routes!(events::post_event_batch))
        .routes(routes!(events::get_event))
        .routes(routes!(events::get_event_observations))
        .routes(routes!(jobs::list_jobs))
        .routes(routes!(jobs::get_job))
        .routes(routes!(jobs::retry_job))
        .routes(routes!(jobs::cancel_job))
        .routes(routes!(memories::create_memory))
        .routes(routes!(feedback::give_feedback, feedback::feedback_of))
        .routes(routes!(memories::delete_memory, memory_edit::update_memory))
        .routes(routes!(visibility::promote))
        .routes(routes!(visibility::unpromote))
        .routes(routes!(visibility::reject))
        .routes(routes!(visibility::review))
        .routes(routes!(context::post_context))
        .routes(routes!(context::get_project_context))
        .routes(routes!(search::post_search, search::get_search))
        .routes(routes!(search::get_timeline))
        .routes(routes!(ask::post_ask))
        .routes(routes!(search::get_observations))
        .routes(routes!(projects::purge_project_memory))
        .routes(routes!(transfer::export_project))
        .routes(routes!(transfer::import_project))
        .routes(routes!(usage::get_project_usage))
        .routes(routes!(memory_digest::get_memory_digest))
        .routes(routes!(memory_changes::list_memory_changes))
        .routes(routes!(memory_changes::revert_memory_change))
        .routes(routes!(admin::teams::create_team, admin::teams::list_teams))
        .routes(routes!(admin::teams::update_team))
        .routes(routes!(
            admin::projects::create_project,
            admin::projects::list_projects
        ))
        .routes(routes!(admin::projects::update_project))
        .routes(routes!(
            admin::project_rules::create_project_rule,
            admin::project_rules::list_project_rules
        ))
        .routes(routes!(admin::project_rules::delete_project_rule))
        .routes(routes!(admin::tokens::mint_token, admin::tokens::list_tokens))
        .routes(routes!(admin::tokens::revoke_token))
        .routes(routes!(admin::audit_log::list_audit))
        .routes(routes!(admin::members::list_members, admin::members::add_member))
        .routes(routes!(admin::members::offboard_member))
        .routes(routes!(admin::members::erase_member))
        .routes(routes!(queue::get_queue))
}

/// The OpenAPI document, as served at `/openapi.json` and committed in `openapi/`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    complete(router().into_openapi())
}

/// The document the annotations give, completed with what every operation
/// must say (`docs::contract`): descriptions, credentials, error responses,
/// `servers`.
pub fn complete(mut doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    crate::docs::contract::complete(&mut doc);
    doc
}
