//! `cairn mcp`: Cairn's memory tools over stdio, for agents that start MCP
//! servers as child processes. A bridge: every `tools/list` and `tools/call`
//! goes to the API's `/v1/mcp` with the bearer token, so tool names, schemas
//! and answers are the server's own. The remote connection opens on first use
//! and reopens after a failure, so the bridge starts even while the API is down.

use std::sync::Arc;

use rmcp::{
    ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ResultType,
        ServerCapabilities, ServerConfig,
    },
    service::{RequestContext, RunningService, ServiceError},
    transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig},
};
use tokio::sync::Mutex;

type Remote = RunningService<RoleClient, ClientConfig>;

/// Serves the bridge on stdin/stdout until the agent closes it.
pub async fn serve(url: &str, token: &str) -> anyhow::Result<()> {
    if token.trim().is_empty() {
        anyhow::bail!("set CAIRN_TOKEN (or --token) to a token with the `read` scope");
    }
    let running = Bridge::new(url, token).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

pub struct Bridge {
    endpoint: String,
    token: String,
    remote: Mutex<Option<Arc<Remote>>>,
}

enum Failure {
    /// The server answered with a protocol error (an unknown tool): passed on as is.
    Refused(ErrorData),
    /// No answer: the message says where and why.
    Unreachable(String),
}

impl Bridge {
    pub fn new(url: &str, token: &str) -> Self {
        Self {
            endpoint: format!("{}/v1/mcp", url.trim().trim_end_matches('/')),
            token: token.trim().to_string(),
            remote: Mutex::new(None),
        }
    }

    /// The open connection to `/v1/mcp`, opened if there is none.
    async fn remote(&self) -> Result<Arc<Remote>, String> {
        let mut remote = self.remote.lock().await;
        if let Some(open) = remote.as_ref().filter(|r| !r.is_closed()) {
            return Ok(open.clone());
        }
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(self.endpoint.as_str()).auth_header(&self.token),
        );
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("cairn-mcp-bridge", env!("CARGO_PKG_VERSION")),
        );
        let open = Arc::new(client.serve(transport).await.map_err(|e| self.unreachable(e))?);
        *remote = Some(open.clone());
        Ok(open)
    }

    /// Drops a connection that failed, so the next call opens a new one.
    async fn forget(&self, failed: &Arc<Remote>) {
        let mut remote = self.remote.lock().await;
        if remote.as_ref().is_some_and(|r| Arc::ptr_eq(r, failed)) {
            *remote = None;
        }
    }

    /// What went wrong, without rmcp's wrapper types, and what to check.
    fn unreachable(&self, e: impl std::fmt::Display) -> String {
        let text = e.to_string();
        let detail = text.rsplit_once("] error: ").map_or(text.as_str(), |(_, d)| d);
        let detail = detail.trim_end_matches(", when send initialize request");
        let hint = if detail.contains("HTTP 401") || detail.contains("HTTP 403") {
            " (check CAIRN_TOKEN: it needs the `read` scope)"
        } else if detail.contains("error sending request") {
            " (check CAIRN_URL, and that the server is up)"
        } else {
            ""
        };
        format!("Cairn at {} failed: {detail}{hint}", self.endpoint)
    }

    async fn call_once(&self, params: &CallToolRequestParams) -> Result<CallToolResponse, Failure> {
        let remote = self.remote().await.map_err(Failure::Unreachable)?;
        match remote.call_tool_once(params.clone()).await {
            Ok(response) => Ok(response),
            Err(ServiceError::McpError(e)) => Err(Failure::Refused(e)),
            Err(e) => {
                self.forget(&remote).await;
                Err(Failure::Unreachable(self.unreachable(e)))
            }
        }
    }
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")).with_title("Cairn"))
            .with_instructions(
                "Cairn is this team's shared memory of past coding sessions. Use `search` to find \
                 observations and summaries, `timeline` for what happened around one, \
                 `get_observations` for full details by id, and `context` for the project's memory.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut last = String::new();
        // A stale connection gets one retry on a fresh one.
        for _ in 0..2 {
            let remote = self
                .remote()
                .await
                .map_err(|e| ErrorData::internal_error(e, None))?;
            match remote.list_all_tools().await {
                Ok(tools) => return Ok(ListToolsResult::with_all_items(tools)),
                Err(ServiceError::McpError(e)) => return Err(e),
                Err(e) => {
                    self.forget(&remote).await;
                    last = self.unreachable(e);
                }
            }
        }
        Err(ErrorData::internal_error(last, None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut params = CallToolRequestParams::new(request.name);
        params.arguments = request.arguments;
        // Tools only read, so a call that failed on a stale connection is safe to repeat once.
        let result = match self.call_once(&params).await {
            Err(Failure::Unreachable(_)) => self.call_once(&params).await,
            done => done,
        };
        match result {
            Ok(response) => Ok(discriminated(response)),
            Err(Failure::Refused(e)) => Err(e),
            Err(Failure::Unreachable(message)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into())
            }
        }
    }
}

/// The bridge speaks to `/v1/mcp` in one revision and to its own client in the
/// revision that client asked for. A result read from an upstream answer in a
/// revision before 2026-07-28 has no `resultType`, which 2026-07-28 requires on
/// every result; it gets `complete` here, and rmcp's server side strips it
/// again for clients that negotiated an older revision, so each client is
/// answered in its own revision.
fn discriminated(response: CallToolResponse) -> CallToolResponse {
    match response {
        CallToolResponse::Complete(mut result) => {
            result.result_type.get_or_insert(ResultType::COMPLETE);
            CallToolResponse::Complete(result)
        }
        other => other,
    }
}
