//! Every route and the OpenAPI document come from this one list, so the spec
//! cannot drift from the handlers.

pub mod admin;
pub mod context;
pub mod events;
pub mod health;
pub mod hooks;
pub mod jobs;
pub mod memories;
pub mod projects;
pub mod search;
pub mod sessions;
pub mod usage;
pub mod whoami;

use utoipa::{
    Modify, OpenApi,
    openapi::security::{Http, HttpAuthScheme, SecurityScheme},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    info(title = "Cairn", description = "Team-hosted memory server for coding agents."),
    modifiers(&BearerAuth),
    tags(
        (name = "ingest", description = "Agents' native hooks"),
        (name = "sessions"), (name = "events"), (name = "jobs"), (name = "memories"),
        (name = "memory", description = "Memory given back: context, search, timeline"),
        (name = "projects"), (name = "admin", description = "Teams, projects, tokens, audit log"),
        (name = "health"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(health::healthz))
        .routes(routes!(health::readiness))
        .routes(routes!(health::health))
        .routes(routes!(health::info))
        .routes(routes!(hooks::post_hook))
        .routes(routes!(whoami::whoami))
        .routes(routes!(whoami::resolve_project))
        .routes(routes!(sessions::start_session))
        .routes(routes!(sessions::get_session))
        .routes(routes!(sessions::end_session))
        .routes(routes!(events::post_event))
        .routes(routes!(events::post_event_batch))
        .routes(routes!(events::get_event))
        .routes(routes!(events::get_event_observations))
        .routes(routes!(jobs::list_jobs))
        .routes(routes!(jobs::get_job))
        .routes(routes!(jobs::retry_job))
        .routes(routes!(jobs::cancel_job))
        .routes(routes!(memories::create_memory))
        .routes(routes!(memories::delete_memory))
        .routes(routes!(context::post_context))
        .routes(routes!(context::get_project_context))
        .routes(routes!(search::post_search, search::get_search))
        .routes(routes!(search::get_timeline))
        .routes(routes!(search::get_observations))
        .routes(routes!(projects::purge_project_memory))
        .routes(routes!(usage::get_project_usage))
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
}

/// The OpenAPI document, as served at `/openapi.json` and committed in `openapi/`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    complete(router().into_openapi())
}

/// Gives every response the `description` OpenAPI requires, where a route
/// declared none: the status's reason phrase ("OK", "Not Found", …), so the
/// document validates and client generators accept it.
pub fn complete(mut doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::RefOr;
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
            &mut item.head,
            &mut item.options,
            &mut item.trace,
        ];
        for op in operations.into_iter().flatten() {
            for (status, response) in op.responses.responses.iter_mut() {
                if let RefOr::T(r) = response
                    && r.description.is_empty()
                {
                    r.description = status
                        .parse::<u16>()
                        .ok()
                        .and_then(|c| axum::http::StatusCode::from_u16(c).ok())
                        .and_then(|c| c.canonical_reason())
                        .unwrap_or("Response")
                        .to_string();
                }
            }
        }
    }
    doc
}
