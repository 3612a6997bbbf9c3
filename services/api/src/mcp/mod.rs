//! MCP over streamable HTTP at `/v1/mcp`: the memory tools (`tools`) rendered
//! as compact text (`format`). Stateless (every POST stands alone, so any
//! replica answers), and authenticated before rmcp sees the request: the
//! caller's `Auth` rides in the request extensions to the tool handlers.

mod format;
mod tools;

use axum::{
    Router,
    extract::Request,
    middleware::{self, Next},
    response::Response,
};
use cairn_shared::auth::Scope;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};

pub use tools::{CairnMcp, TOOL_NAMES};

use crate::{auth::Auth, error::ApiError, state::AppState};

pub const PATH: &str = "/v1/mcp";

/// The `/v1/mcp` route: bearer auth (`read` scope), then rmcp's service.
pub fn router(state: &AppState) -> Router<AppState> {
    let tools = state.clone();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // Deployments sit behind proxies under their own names, and every
        // request carries a bearer token, which DNS rebinding cannot forge.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(state.config.limits.max_body_bytes);
    let service = StreamableHttpService::new(
        move || Ok(CairnMcp::new(tools.clone())),
        NeverSessionManager::default().into(),
        config,
    );
    Router::new()
        .route_service(PATH, service)
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate))
}

/// No credential → 401, a bad one or no `read` scope → 403, with the API's error body.
async fn authenticate(auth: Auth, mut req: Request, next: Next) -> Result<Response, ApiError> {
    auth.require(Scope::Read)?;
    req.extensions_mut().insert(auth);
    Ok(next.run(req).await)
}
