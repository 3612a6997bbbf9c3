//! Per-credential and per-client-address request rates (GCRA, `governor`),
//! checked before authentication so a flood of bad tokens costs neither a
//! signature check nor a database lookup. Each replica keeps its own
//! counters: with N replicas behind a balancer a client gets up to N times
//! the configured rate (see README).

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

#[derive(Clone)]
pub struct RateLimiter(Arc<Inner>);

struct Inner {
    per_token: Option<DefaultKeyedRateLimiter<[u8; 16]>>,
    per_ip: Option<DefaultKeyedRateLimiter<IpAddr>>,
    ip_header: Option<String>,
}

fn quota(per_second: u32, burst: u32) -> Option<Quota> {
    let rate = NonZeroU32::new(per_second)?;
    let burst = NonZeroU32::new(burst.max(per_second)).unwrap_or(rate);
    Some(Quota::per_second(rate).allow_burst(burst))
}

impl RateLimiter {
    /// A rate of 0 turns that limit off.
    pub fn new(config: &RateLimits) -> Self {
        Self(Arc::new(Inner {
            per_token: quota(config.per_token, config.per_token_burst).map(Gcra::keyed),
            per_ip: quota(config.per_ip, config.per_ip_burst).map(Gcra::keyed),
            ip_header: config.client_ip_header.clone(),
        }))
    }

    /// Forgets clients that are back to a full allowance; call periodically.
    pub fn forget_idle(&self) {
        if let Some(l) = &self.0.per_token {
            l.retain_recent();
            l.shrink_to_fit();
        }
        if let Some(l) = &self.0.per_ip {
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

    /// `Err(seconds to wait)` when either limit is spent.
    pub fn check(&self, req: &Request) -> Result<(), u64> {
        let wait = |not_until: governor::NotUntil<_>| {
            not_until
                .wait_time_from(DefaultClock::default().now())
                .as_secs_f64()
                .ceil() as u64
        };
        if let (Some(limiter), Some(ip)) = (&self.0.per_ip, self.client_ip(req)) {
            limiter.check_key(&ip).map_err(wait)?;
        }
        if let (Some(limiter), Some(key)) = (&self.0.per_token, credential_key(req.headers())) {
            limiter.check_key(&key).map_err(wait)?;
        }
        Ok(())
    }
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
    match limiter.check(&req) {
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
