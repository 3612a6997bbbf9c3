//! The one HTTP call: `POST {url}/v1/hooks/{agent}?…` with the event's
//! Idempotency-Key and time, on a blocking keep-alive agent, within a deadline.

use std::time::{Duration, Instant};

use ureq::Agent;

use crate::{
    client_config::ClientConfig,
    spool::{Entry, Sent},
};

/// Largest answer read back (SessionStart context is capped far below).
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

pub struct Wire {
    agent: Agent,
    url: String,
    auth: Option<String>,
    connect_timeout: Duration,
    timeout: Duration,
}

impl Wire {
    pub fn new(config: &ClientConfig) -> Self {
        let agent = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(config.connect_timeout))
            .timeout_global(Some(config.timeout))
            .user_agent(concat!("cairn-hook/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Self {
            agent,
            url: config.url.clone(),
            auth: config.token.as_ref().map(|t| format!("Bearer {t}")),
            connect_timeout: config.connect_timeout,
            timeout: config.timeout,
        }
    }

    /// Sends one event, finishing by `deadline` (else within one call's timeout).
    pub fn send(&self, entry: &Entry, replay: bool, deadline: Option<Instant>) -> Sent {
        let total = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => self.timeout,
        };
        if total.is_zero() {
            return Sent::Retry("no time left".into());
        }
        let mut url = format!("{}/v1/hooks/{}", self.url, entry.agent);
        if !entry.query.is_empty() {
            url.push('?');
            url.push_str(&entry.query);
        }
        let mut request = self
            .agent
            .post(&url)
            .config()
            .timeout_global(Some(total))
            .timeout_connect(Some(self.connect_timeout.min(total)))
            .build()
            .header("content-type", "application/json")
            .header("idempotency-key", &entry.key)
            .header("x-cairn-occurred-at", entry.at.to_string());
        if let Some(auth) = &self.auth {
            request = request.header("authorization", auth);
        }
        if replay {
            request = request.header("x-cairn-replay", "1");
        }
        let mut response = match request.send(entry.body.get().as_bytes()) {
            Ok(r) => r,
            Err(e) => return Sent::Retry(format!("{url_base}: {e}", url_base = self.url)),
        };
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string();
        classify(status, text.ok())
    }
}

/// Which answers are worth retrying: see docs/hook-client.md, "The spool".
pub fn classify(status: u16, body: Option<String>) -> Sent {
    if (200..300).contains(&status) {
        let json = body.filter(|b| serde_json::from_str::<serde::de::IgnoredAny>(b).is_ok());
        return Sent::Delivered(json);
    }
    let code = body
        .as_deref()
        .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
        .and_then(|v| v["error"]["code"].as_str().map(str::to_string));
    let why = format!("HTTP {status} {}", code.as_deref().unwrap_or(""));
    let why = why.trim_end().to_string();
    if status >= 500 || status == 429 || (status == 404 && code.as_deref() == Some("project_unresolved")) {
        Sent::Retry(why)
    } else {
        Sent::Rejected(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(code: &str) -> Option<String> {
        Some(format!(
            r#"{{"error":{{"code":"{code}","message":"m","requestId":"r"}}}}"#
        ))
    }

    #[test]
    fn answers_are_classified_as_the_contract_says() {
        assert!(
            matches!(classify(200, Some("{\"a\":1}".into())), Sent::Delivered(Some(b)) if b == "{\"a\":1}")
        );
        assert!(matches!(
            classify(200, Some("<html>".into())),
            Sent::Delivered(None)
        ));
        assert!(matches!(classify(503, None), Sent::Retry(_)));
        assert!(matches!(classify(429, err("rate_limited")), Sent::Retry(_)));
        assert!(matches!(classify(404, err("project_unresolved")), Sent::Retry(_)));
        assert!(matches!(classify(404, err("unknown_agent")), Sent::Rejected(_)));
        assert!(matches!(classify(403, err("forbidden")), Sent::Rejected(w) if w == "HTTP 403 forbidden"));
        assert!(matches!(classify(422, None), Sent::Rejected(_)));
    }
}
