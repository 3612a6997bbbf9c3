//! HTTP plumbing shared by the model providers: one pooled client, a JSON POST,
//! and the one place where failures become a classified [`ProviderError`].

use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDateTime, Utc};
use reqwest::{
    StatusCode,
    header::{HeaderMap, HeaderValue},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{ErrorClass, ProviderError};
use crate::generation::retry::MAX_RETRY_AFTER;

/// Longest provider error message kept in a [`ProviderError`], in characters.
pub(super) const MESSAGE_CHARS: usize = 300;
/// Most bytes read from an error answer (only its message is wanted).
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// Most bytes read from a successful answer; more is not a completion.
const SUCCESS_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// A JSON-over-HTTP client for one provider: a pooled `reqwest::Client` with
/// the configured per-request timeout (connect to last body byte).
pub(super) struct JsonClient {
    client: reqwest::Client,
    provider: &'static str,
    timeout: Duration,
}

/// A successful answer, decoded, and how long the call took.
pub(super) struct Reply<T> {
    pub body: T,
    pub latency: Duration,
}

impl JsonClient {
    /// Redirects are not followed: they would carry the API key to another
    /// host, and a provider endpoint that redirects is misconfigured.
    pub(super) fn new(provider: &'static str, timeout: Duration) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("cairn-generator/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            client,
            provider,
            timeout,
        })
    }

    /// POSTs `body` as JSON and decodes a 2xx answer as `T`. Every failure is
    /// classified: transport errors and timeouts, error statuses (with the
    /// provider's message and Retry-After), and 2xx bodies that are not `T`.
    pub(super) async fn post<T: DeserializeOwned>(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &impl Serialize,
    ) -> Result<Reply<T>, ProviderError> {
        let started = Instant::now();
        let response = self
            .client
            .post(url)
            .headers(headers)
            .json(body)
            .send()
            .await
            .map_err(|e| self.transport_error(e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(self.status_error(response).await);
        }
        let (bytes, truncated) = read_capped(response, SUCCESS_BODY_LIMIT)
            .await
            .map_err(|e| self.transport_error(e))?;
        let latency = started.elapsed();
        if truncated {
            return Err(self.parse_error(format!(
                "HTTP {status}: answer larger than {SUCCESS_BODY_LIMIT} bytes"
            )));
        }
        // A lone surrogate escape (half an emoji) makes the whole answer
        // unreadable to serde_json; read it as U+FFFD rather than pay again.
        let decoded = serde_json::from_slice(&bytes).or_else(|e| match without_lone_surrogates(&bytes) {
            Some(repaired) => serde_json::from_slice(&repaired).map_err(|_| e),
            None => Err(e),
        });
        match decoded {
            Ok(body) => Ok(Reply { body, latency }),
            Err(e) => Err(self.parse_error(format!(
                "HTTP {status}: answer is not the expected JSON ({e}): {}",
                error_detail(&bytes).message
            ))),
        }
    }

    /// A [`ErrorClass::ParseError`] naming this provider.
    pub(super) fn parse_error(&self, message: impl std::fmt::Display) -> ProviderError {
        ProviderError::new(ErrorClass::ParseError, format!("{} {message}", self.provider))
    }

    /// A request that got no HTTP answer: timeouts and network errors are
    /// transient, a request that could not even be built is not.
    fn transport_error(&self, error: reqwest::Error) -> ProviderError {
        let provider = self.provider;
        if error.is_timeout() {
            let ms = self.timeout.as_millis();
            return ProviderError::new(
                ErrorClass::Transient,
                format!("{provider} request timed out after {ms} ms"),
            );
        }
        let class = if error.is_builder() {
            ErrorClass::Unrecoverable
        } else {
            ErrorClass::Transient
        };
        let what = if error.is_connect() {
            "could not connect"
        } else {
            "request failed"
        };
        let endpoint = error.url().map(redacted).unwrap_or_default();
        let cause = truncate(&error_chain(&error.without_url()), MESSAGE_CHARS);
        ProviderError::new(class, format!("{provider} {what} {endpoint}: {cause}"))
    }

    /// An error status: classified from the status and the provider's error
    /// body, with its message and any Retry-After.
    async fn status_error(&self, response: reqwest::Response) -> ProviderError {
        let status = response.status();
        let retry_after = retry_after(response.headers(), Utc::now());
        let detail = match read_capped(response, ERROR_BODY_LIMIT).await {
            Ok((bytes, _)) => error_detail(&bytes),
            Err(e) => ErrorDetail {
                message: format!("(error body unreadable: {})", error_chain(&e.without_url())),
                ..ErrorDetail::default()
            },
        };
        let class = classify(status, &detail);
        let status_text = match status.canonical_reason() {
            Some(reason) => format!("{} {reason}", status.as_u16()),
            None => status.as_u16().to_string(),
        };
        let message = match detail.kind.as_deref().or(detail.code.as_deref()) {
            Some(kind) => format!(
                "{} HTTP {status_text} ({kind}): {}",
                self.provider, detail.message
            ),
            None => format!("{} HTTP {status_text}: {}", self.provider, detail.message),
        };
        ProviderError {
            class,
            message,
            retry_after,
        }
    }
}

/// What an error body says, in the envelope both APIs share:
/// `{"error": {"type", "code", "message"}}` (OpenAI-compatible servers also
/// send `{"error": "text"}` or a top-level `message`/`detail`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct ErrorDetail {
    /// `error.type`: `overloaded_error`, `billing_error`, `insufficient_quota`, …
    pub kind: Option<String>,
    /// `error.code` (OpenAI), as text.
    pub code: Option<String>,
    /// The human message, or the start of a non-JSON body; truncated.
    pub message: String,
}

/// Reads the provider's error from a body of any shape (JSON, HTML, empty).
pub(super) fn error_detail(body: &[u8]) -> ErrorDetail {
    let text = String::from_utf8_lossy(body);
    let Ok(json) = serde_json::from_str::<Value>(&text) else {
        let squeezed = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let message = if squeezed.is_empty() {
            "(empty body)".to_string()
        } else {
            truncate(&squeezed, MESSAGE_CHARS)
        };
        return ErrorDetail {
            message,
            ..ErrorDetail::default()
        };
    };
    let error = json.get("error").unwrap_or(&json);
    let field = |name: &str| match error.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = match error {
        Value::String(s) => Some(s.clone()),
        _ => field("message")
            .or_else(|| field("detail"))
            .or_else(|| json.get("message").and_then(Value::as_str).map(String::from)),
    }
    .unwrap_or_else(|| json.to_string());
    ErrorDetail {
        kind: field("type"),
        code: field("code"),
        message: truncate(&message, MESSAGE_CHARS),
    }
}

/// The error class of an error answer, for every provider:
///
/// | answer                                                        | class         |
/// |---------------------------------------------------------------|---------------|
/// | 402, or a 4xx saying `insufficient_quota`, `billing_error` or "credit balance" | Quota |
/// | 401, 403                                                      | Auth          |
/// | 408                                                           | Transient     |
/// | 429                                                           | RateLimit     |
/// | other 4xx (400, 404, 413, 422, …)                             | Unrecoverable |
/// | 5xx (500, 502, 503, 504, 529 overloaded, …)                   | Transient     |
/// | anything else (an unfollowed 3xx)                             | Unrecoverable |
pub(super) fn classify(status: StatusCode, detail: &ErrorDetail) -> ErrorClass {
    if status.is_server_error() {
        return ErrorClass::Transient;
    }
    if !status.is_client_error() {
        return ErrorClass::Unrecoverable;
    }
    if status == StatusCode::PAYMENT_REQUIRED || is_out_of_credit(detail) {
        return ErrorClass::Quota;
    }
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ErrorClass::Auth,
        StatusCode::REQUEST_TIMEOUT => ErrorClass::Transient,
        StatusCode::TOO_MANY_REQUESTS => ErrorClass::RateLimit,
        _ => ErrorClass::Unrecoverable,
    }
}

/// OpenAI's `insufficient_quota` (a 429 that waiting will not fix), Anthropic's
/// `billing_error` and its "Your credit balance is too low" 400.
fn is_out_of_credit(detail: &ErrorDetail) -> bool {
    let marked = |v: &Option<String>| {
        v.as_deref()
            .is_some_and(|v| v == "insufficient_quota" || v == "billing_error")
    };
    marked(&detail.kind) || marked(&detail.code) || detail.message.to_lowercase().contains("credit balance")
}

/// The wait a response asks for: `Retry-After` (delta-seconds or HTTP-date),
/// else `retry-after-ms` (sent by some OpenAI-compatible servers). At most
/// [`MAX_RETRY_AFTER`]; a negative or unreadable value is none.
pub(super) fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let text = |v: &HeaderValue| v.to_str().ok().map(str::trim).map(String::from);
    if let Some(value) = headers.get(reqwest::header::RETRY_AFTER).and_then(text) {
        return parse_retry_after(&value, now);
    }
    let ms = headers.get("retry-after-ms").and_then(text)?;
    let ms: f64 = ms.parse().ok().filter(|ms: &f64| *ms >= 0.0)?;
    Some(capped_seconds(ms / 1000.0))
}

/// A `Retry-After` value: seconds (`7`, or `7.5` as some servers send) or an
/// HTTP-date (IMF-fixdate, RFC 850 or asctime). A date in the past is zero;
/// anything longer than [`MAX_RETRY_AFTER`] is that (`99999999999999` is a
/// provider bug, not a plan).
pub(super) fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        // NaN is not `>= 0`; infinity is capped.
        return (seconds >= 0.0).then(|| capped_seconds(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .map(|d| d.with_timezone(&Utc))
        .or_else(|_| NaiveDateTime::parse_from_str(value, "%A, %d-%b-%y %H:%M:%S GMT").map(|d| d.and_utc()))
        .or_else(|_| NaiveDateTime::parse_from_str(value, "%a %b %e %H:%M:%S %Y").map(|d| d.and_utc()))
        .ok()?;
    Some(
        at.signed_duration_since(now)
            .to_std()
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

/// Non-negative seconds as a duration of at most [`MAX_RETRY_AFTER`].
fn capped_seconds(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds.clamp(0.0, MAX_RETRY_AFTER.as_secs_f64()))
}

/// The JSON text with every `\u` escape of a lone surrogate (`\ud83d`
/// without its pair, which serde_json refuses in a string) made `\ufffd`;
/// `None` when there is none. Escaped backslashes (`\\ud83d`) are text.
fn without_lone_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    let hex4 = |at: usize| {
        let digits = bytes.get(at..at + 4)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let high = |c: u32| (0xd800..0xdc00).contains(&c);
    let low = |c: u32| (0xdc00..0xe000).contains(&c);
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(code) = hex4(i + 2) else {
            i += 2;
            continue;
        };
        let paired =
            high(code) && bytes.get(i + 6..i + 8) == Some(&b"\\u"[..]) && hex4(i + 8).is_some_and(low);
        if paired {
            i += 12;
            continue;
        }
        if high(code) || low(code) {
            out.get_or_insert_with(|| bytes.to_vec())[i + 2..i + 6].copy_from_slice(b"fffd");
        }
        i += 6;
    }
    out
}

/// At most `max_chars` characters of `text` (cut on a char boundary), with an
/// ellipsis when something was cut.
pub(super) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The request's output budget, or the configured one when the request has none.
pub(super) fn output_budget(requested: u32, configured: u32) -> u32 {
    if requested == 0 { configured } else { requested }
}

/// A duration in whole milliseconds, for [`super::Usage::latency_ms`].
pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Reads at most `limit` bytes of the body; `true` when there was more.
async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// An error and its causes, `outer: inner: root`.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A URL without any user or password in it.
fn redacted(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(kind: Option<&str>, message: &str) -> ErrorDetail {
        ErrorDetail {
            kind: kind.map(String::from),
            code: None,
            message: message.into(),
        }
    }

    #[test]
    fn statuses_are_classified() {
        let plain = ErrorDetail::default();
        let cases = [
            (500, ErrorClass::Transient),
            (502, ErrorClass::Transient),
            (503, ErrorClass::Transient),
            (504, ErrorClass::Transient),
            (529, ErrorClass::Transient),
            (408, ErrorClass::Transient),
            (429, ErrorClass::RateLimit),
            (402, ErrorClass::Quota),
            (401, ErrorClass::Auth),
            (403, ErrorClass::Auth),
            (400, ErrorClass::Unrecoverable),
            (404, ErrorClass::Unrecoverable),
            (413, ErrorClass::Unrecoverable),
            (422, ErrorClass::Unrecoverable),
            (409, ErrorClass::Unrecoverable),
            (302, ErrorClass::Unrecoverable),
        ];
        for (status, class) in cases {
            let status = StatusCode::from_u16(status).unwrap();
            assert_eq!(classify(status, &plain), class, "{status}");
        }
    }

    #[test]
    fn out_of_credit_is_quota_whatever_the_4xx() {
        let too_many = StatusCode::TOO_MANY_REQUESTS;
        let bad = StatusCode::BAD_REQUEST;
        assert_eq!(
            classify(too_many, &detail(Some("insufficient_quota"), "x")),
            ErrorClass::Quota
        );
        assert_eq!(
            classify(too_many, &detail(Some("requests"), "slow down")),
            ErrorClass::RateLimit
        );
        assert_eq!(
            classify(bad, &detail(Some("billing_error"), "x")),
            ErrorClass::Quota
        );
        let credit = detail(
            Some("invalid_request_error"),
            "Your credit balance is too low to access the Anthropic API.",
        );
        assert_eq!(classify(bad, &credit), ErrorClass::Quota);
        assert_eq!(
            classify(bad, &detail(Some("invalid_request_error"), "bad")),
            ErrorClass::Unrecoverable
        );
        // A server error stays transient whatever it says.
        let unavailable = StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(
            classify(unavailable, &detail(Some("billing_error"), "x")),
            ErrorClass::Transient
        );
    }

    #[test]
    fn error_bodies_of_every_shape_are_read() {
        let anthropic = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            error_detail(anthropic),
            detail(Some("overloaded_error"), "Overloaded")
        );
        let openai = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let read = error_detail(openai);
        assert_eq!(read.code.as_deref(), Some("insufficient_quota"));
        assert_eq!(read.message, "You exceeded your current quota");
        assert_eq!(
            error_detail(br#"{"error":"model 'x' not found"}"#).message,
            "model 'x' not found"
        );
        let vllm = br#"{"object":"error","message":"too long","type":"BadRequestError","code":400}"#;
        assert_eq!(error_detail(vllm).code.as_deref(), Some("400"));
        assert_eq!(error_detail(vllm).message, "too long");
        let html = b"<html>\n  <body>502   Bad Gateway</body></html>";
        assert_eq!(
            error_detail(html).message,
            "<html> <body>502 Bad Gateway</body></html>"
        );
        assert_eq!(error_detail(b"").message, "(empty body)");
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let long = "é".repeat(1000);
        let cut = truncate(&long, MESSAGE_CHARS);
        assert_eq!(cut.chars().count(), MESSAGE_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short", MESSAGE_CHARS), "short");
        let body = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        assert!(error_detail(body.as_bytes()).message.chars().count() <= MESSAGE_CHARS + 1);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = DateTime::parse_from_rfc3339("2015-10-21T07:27:30Z")
            .unwrap()
            .to_utc();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0.5 ", now), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        let in_30s = Some(Duration::from_secs(30));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now), in_30s);
        assert_eq!(
            parse_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT", now),
            in_30s
        );
        assert_eq!(parse_retry_after("Wed Oct 21 07:28:00 2015", now), in_30s);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );

        let mut headers = HeaderMap::new();
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(1500)));
        headers.insert("Retry-After", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        let fixed = |s: &str| without_lone_surrogates(s.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(
            fixed(r#"{"t":"a\ud83d b"}"#).as_deref(),
            Some(r#"{"t":"a\ufffd b"}"#)
        );
        assert_eq!(
            fixed(r#"{"t":"\udc00\ud800"}"#).as_deref(),
            Some(r#"{"t":"\ufffd\ufffd"}"#)
        );
        assert_eq!(fixed(r#"{"t":"\ud83d\ude00 ok \u0041 \\ud83d"}"#), None);
        assert_eq!(fixed(r#"{"t":"\ud8"}"#), None);
        let repaired = fixed(r#"{"t":"x\ud83dy"}"#).unwrap();
        let value: serde_json::Value = serde_json::from_str(&repaired).unwrap();
        assert_eq!(value["t"], "x\u{fffd}y");
    }

    #[test]
    fn absurd_or_garbage_retry_after_is_bounded_or_ignored() {
        let now = Utc::now();
        for absurd in [
            "99999999999999",
            "99999999999999999999999999999",
            "1e400",
            "inf",
            "3601",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ] {
            assert_eq!(parse_retry_after(absurd, now), Some(MAX_RETRY_AFTER), "{absurd}");
        }
        for garbage in [
            "-1",
            "-99999999999999",
            "NaN",
            "",
            "1h",
            "Wed, 99 Foo 2015",
            "0x10",
        ] {
            assert_eq!(parse_retry_after(garbage, now), None, "{garbage}");
        }
        let mut headers = HeaderMap::new();
        headers.insert("retry-after-ms", HeaderValue::from_static("99999999999999999999"));
        assert_eq!(retry_after(&headers, now), Some(MAX_RETRY_AFTER));
        headers.insert("retry-after-ms", HeaderValue::from_static("-5"));
        assert_eq!(retry_after(&headers, now), None);
    }

    #[test]
    fn urls_lose_their_credentials() {
        let url = reqwest::Url::parse("http://user:secret@localhost:11434/v1/chat/completions").unwrap();
        assert_eq!(redacted(&url), "http://localhost:11434/v1/chat/completions");
    }
}
