//! Per-credential and per-client-address request rates (GCRA), checked
//! before authentication so a flood of bad tokens costs neither a signature
//! check nor a database lookup. Each replica first checks its own counters
//! (`governor`: a flood at one replica is refused there, with no Redis
//! call), then the counters every replica shares in Redis (`shared`), so N
//! replicas behind a balancer give a client the configured rate, not N times
//! it. Without Redis, each replica's own counters decide.

mod shared;

use std::{
    net::{IpAddr, SocketAddr},
    num::NonZeroU32,
    sync::Arc,
    time::Duration,
};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::{HeaderMap, header::AUTHORIZATION},
    middleware::Next,
    response::{IntoResponse, Response},
};
use governor::{
    DefaultKeyedRateLimiter, Quota, RateLimiter as Gcra,
    clock::{Clock, DefaultClock},
};
use sha2::{Digest, Sha256};

use crate::{config::RateLimits, error::ApiError};
use shared::{Limit, Shared, Verdict};

#[derive(Clone)]
pub struct RateLimiter(Arc<Inner>);

struct Inner {
    per_token: Option<(Quota, DefaultKeyedRateLimiter<[u8; 16]>)>,
    per_ip: Option<(Quota, DefaultKeyedRateLimiter<IpAddr>)>,
    ip_header: Option<String>,
    shared: Option<Shared>,
    /// Prefix of the shared keys: one deployment's replicas share a
    /// database, so its name scopes them (`cairn:rate:<database>:`).
    scope: String,
}

fn quota(per_second: u32, burst: u32) -> Option<Quota> {
    let rate = NonZeroU32::new(per_second)?;
    let burst = NonZeroU32::new(burst.max(per_second)).unwrap_or(rate);
    Some(Quota::per_second(rate).allow_burst(burst))
}

impl RateLimiter {
    /// A rate of 0 turns that limit off. With `redis` (and
    /// `config.shared`), the limits are shared by every replica through it.
    pub fn new(
        config: &RateLimits,
        database_url: &str,
        redis: Option<(redis::aio::ConnectionManager, Duration)>,
    ) -> Self {
        fn keyed<K: Clone + Eq + std::hash::Hash>(q: Quota) -> (Quota, DefaultKeyedRateLimiter<K>) {
            (q, Gcra::keyed(q))
        }
        Self(Arc::new(Inner {
            per_token: quota(config.per_token, config.per_token_burst).map(keyed),
            per_ip: quota(config.per_ip, config.per_ip_burst).map(keyed),
            ip_header: config.client_ip_header.clone(),
            shared: redis
                .filter(|_| config.shared)
                .map(|(conn, timeout)| Shared::new(conn, timeout)),
            scope: format!("cairn:rate:{}:", database_name(database_url)),
        }))
    }

    /// Forgets clients that are back to a full allowance; call periodically.
    pub fn forget_idle(&self) {
        if let Some((_, l)) = &self.0.per_token {
            l.retain_recent();
            l.shrink_to_fit();
        }
        if let Some((_, l)) = &self.0.per_ip {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }

    fn client_ip(&self, req: &Request) -> Option<IpAddr> {
        if let Some(name) = &self.0.ip_header
            && let Some(ip) = req
                .headers()
                .get(name.as_str())
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.rsplit(',').next())
                .and_then(|v| v.trim().parse().ok())
        {
            return Some(ip);
        }
        req.extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
    }

    /// `Err(seconds to wait)` when either limit is spent on this replica's
    /// counters; else the limits to check with the other replicas.
    fn check_own(&self, req: &Request) -> Result<Vec<Limit>, u64> {
        let wait = |not_until: governor::NotUntil<_>| {
            not_until
                .wait_time_from(DefaultClock::default().now())
                .as_secs_f64()
                .ceil() as u64
        };
        let shared = self.0.shared.is_some();
        let mut limits = Vec::new();
        if let (Some((quota, limiter)), Some(ip)) = (&self.0.per_ip, self.client_ip(req)) {
            limiter.check_key(&ip).map_err(wait)?;
            if shared {
                limits.push(Limit {
                    key: format!("{}ip:{ip}", self.0.scope),
                    quota: *quota,
                });
            }
        }
        if let (Some((quota, limiter)), Some(key)) = (&self.0.per_token, credential_key(req.headers())) {
            limiter.check_key(&key).map_err(wait)?;
            if shared {
                limits.push(Limit {
                    key: format!("{}token:{}", self.0.scope, hex::encode(key)),
                    quota: *quota,
                });
            }
        }
        Ok(limits)
    }
}

/// The database a URL names (`postgres://…/cairn?…` → `cairn`).
fn database_name(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = rest.split_once('/').map_or("", |(_, path)| path);
    path.split(['?', '#']).next().unwrap_or_default()
}

/// A digest of the presented credential, whatever it is: garbage counts too.
fn credential_key(headers: &HeaderMap) -> Option<[u8; 16]> {
    let value = headers.get(AUTHORIZATION).or_else(|| headers.get("x-api-key"))?;
    let digest = Sha256::digest(value.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    Some(key)
}

pub async fn middleware(State(limiter): State<RateLimiter>, req: Request, next: Next) -> Response {
    let own = limiter.check_own(&req);
    let verdict = match (own, &limiter.0.shared) {
        (Err(seconds), _) => Err(seconds),
        (Ok(limits), Some(shared)) => match shared.check(&limits).await {
            Verdict::Refused(seconds) => Err(seconds),
            Verdict::Allowed | Verdict::Unavailable => Ok(()),
        },
        (Ok(_), None) => Ok(()),
    };
    match verdict {
        Ok(()) => next.run(req).await,
        Err(seconds) => ApiError::too_many_requests(seconds).into_response(),
    }
}

/// Runs [`RateLimiter::forget_idle`] every minute while the server runs.
pub fn spawn_cleanup(limiter: RateLimiter) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            limiter.forget_idle();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::database_name;

    #[test]
    fn the_database_name_scopes_shared_keys() {
        assert_eq!(
            database_name("postgres://u:p@db:5432/cairn?sslmode=require"),
            "cairn"
        );
        assert_eq!(database_name("postgresql://db/cairn_test_1"), "cairn_test_1");
        assert_eq!(database_name("postgres://db"), "");
    }
}
