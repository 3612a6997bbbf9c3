//! A small blocking client of the Cairn API for the admin commands: the
//! bearer token on every request, JSON in and out, and any non-2xx answer
//! turned into an error that carries the API's error code and message.

use std::{fmt, io::Read, time::Duration};

use serde_json::Value;

/// The API refused: its status and the `{"error": {code, message}}` it sent.
#[derive(Debug)]
pub struct ApiError {
    pub status: u16,
    pub code: String,
    pub message: String,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} (HTTP {})", self.code, self.message, self.status)
    }
}

impl std::error::Error for ApiError {}

/// The server closed the connection while the request body was being sent:
/// what a server does to a body over its limit before reading it through.
#[derive(Debug)]
pub struct CutOff(pub String);

impl fmt::Display for CutOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the API closed the connection while the request was sent ({})",
            self.0
        )
    }
}

impl std::error::Error for CutOff {}

pub struct Api {
    http: ureq::Agent,
    base: String,
    token: String,
}

/// Answers of a JSON call are read up to this size.
const MAX_ANSWER: u64 = 16 << 20;

impl Api {
    /// `timeout` bounds a whole call; `None` leaves long downloads unbounded
    /// (connecting and the first byte are still bounded).
    pub fn new(base: &str, token: &str, timeout: Option<Duration>) -> Self {
        let http = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(timeout)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Api {
            http,
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }

    pub fn get(&self, path: &str) -> anyhow::Result<Value> {
        let response = self
            .http
            .get(self.url(path))
            .header("authorization", &self.auth())
            .call();
        answer(path, response)
    }

    pub fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.post_bytes(path, "application/json", &serde_json::to_vec(body)?)
    }

    pub fn patch(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let response = self
            .http
            .patch(self.url(path))
            .header("authorization", &self.auth())
            .content_type("application/json")
            .send(&serde_json::to_vec(body)?[..]);
        answer(path, response)
    }

    pub fn post_bytes(&self, path: &str, content_type: &str, body: &[u8]) -> anyhow::Result<Value> {
        let response = self
            .http
            .post(self.url(path))
            .header("authorization", &self.auth())
            .content_type(content_type)
            .send(body);
        answer(path, response)
    }

    /// A GET whose body is read as it arrives.
    pub fn get_stream(&self, path: &str) -> anyhow::Result<impl Read + use<>> {
        let response = self
            .http
            .get(self.url(path))
            .header("authorization", &self.auth())
            .call()
            .map_err(|e| unreachable_api(path, e))?;
        if !response.status().is_success() {
            return Err(refusal(response).into());
        }
        Ok(response.into_body().into_reader())
    }
}

fn unreachable_api(path: &str, e: ureq::Error) -> anyhow::Error {
    use std::io::ErrorKind::{BrokenPipe, ConnectionReset, UnexpectedEof};
    match e {
        // A server that refuses a body it finds too large may close the
        // connection before answering: the client sees a reset, a broken
        // pipe, or ureq's "Peer disconnected" (`UnexpectedEof`).
        ureq::Error::Io(io) if matches!(io.kind(), BrokenPipe | ConnectionReset | UnexpectedEof) => {
            CutOff(format!("{path}: {io}")).into()
        }
        e => anyhow::anyhow!("cannot reach the Cairn API ({path}): {e}"),
    }
}

fn answer(
    path: &str,
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> anyhow::Result<Value> {
    let mut response = response.map_err(|e| unreachable_api(path, e))?;
    if !response.status().is_success() {
        return Err(refusal(response).into());
    }
    let text = response
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER)
        .read_to_string()?;
    Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn refusal(mut response: ureq::http::Response<ureq::Body>) -> ApiError {
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_string()
        .unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let error = &body["error"];
    ApiError {
        status,
        code: error["code"].as_str().unwrap_or("http_error").to_string(),
        message: error["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| text.chars().take(200).collect()),
    }
}
