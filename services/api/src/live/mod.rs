//! Live notices for dashboards: ONE Redis pub/sub connection per API
//! process (`PSUBSCRIBE cairn:live:*`, see `subscriber`), fanned out per
//! project through `tokio::sync::broadcast` channels made when a project's
//! first stream subscribes and dropped with its last. Each stream counts
//! against its token (at most `MAX_STREAMS_PER_TOKEN` at once).
//!
//! The API publishes on the same channels (`observation.updated` after an
//! edit), which is also how every replica drops an edited memory's cached
//! vector.

mod subscriber;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use redis::aio::ConnectionManager;
use tokio::sync::{broadcast, watch};
use uuid::Uuid;

/// Streams one token may hold open at once.
pub const MAX_STREAMS_PER_TOKEN: usize = 8;
/// Notices a slow stream may fall behind before it is told it missed some.
const CHANNEL_CAPACITY: usize = 256;
/// The channel pattern the subscriber listens on.
pub const PATTERN: &str = "cairn:live:*";

pub fn channel(project_id: Uuid) -> String {
    format!("cairn:live:{project_id}")
}

/// One notice: its kind (the SSE event name) and its JSON as published.
#[derive(Clone, Debug)]
pub struct Notice {
    pub kind: Arc<str>,
    pub data: Arc<str>,
}

#[derive(Default)]
struct Channels {
    projects: HashMap<Uuid, broadcast::Sender<Notice>>,
    streams_per_token: HashMap<Uuid, usize>,
}

struct Inner {
    channels: Mutex<Channels>,
    publisher: Option<ConnectionManager>,
    timeout: Duration,
    /// Set at shutdown: every stream ends, so the server's graceful
    /// shutdown is not held open by streams that never finish.
    closing: watch::Sender<bool>,
}

/// The process's fan-out of live notices.
#[derive(Clone)]
pub struct Hub(Arc<Inner>);

/// The token already holds `MAX_STREAMS_PER_TOKEN` streams.
#[derive(Debug)]
pub struct TooManyStreams;

impl Hub {
    /// The hub, and (inside a Tokio runtime) its Redis subscriber, which
    /// reconnects with backoff and ends when the hub is dropped.
    pub fn start(redis_url: &str, timeout: Duration) -> anyhow::Result<Self> {
        let publisher = cairn_wakeup::redis_conn::lazy_connection(redis_url, timeout).ok();
        let hub = Self::without_redis(publisher, timeout);
        if tokio::runtime::Handle::try_current().is_ok() {
            let client = redis::Client::open(redis_url)?;
            tokio::spawn(subscriber::run(Arc::downgrade(&hub.0), client));
        }
        Ok(hub)
    }

    fn without_redis(publisher: Option<ConnectionManager>, timeout: Duration) -> Self {
        Self(Arc::new(Inner {
            channels: Mutex::default(),
            publisher,
            timeout,
            closing: watch::channel(false).0,
        }))
    }

    /// Ends every stream, now and from now on (at shutdown).
    pub fn close(&self) {
        self.0.closing.send_replace(true);
    }

    /// A stream of `project_id`'s notices for `token_id`.
    pub fn subscribe(&self, token_id: Uuid, project_id: Uuid) -> Result<Subscription, TooManyStreams> {
        let mut channels = lock(&self.0.channels);
        let held = channels.streams_per_token.entry(token_id).or_default();
        if *held >= MAX_STREAMS_PER_TOKEN {
            return Err(TooManyStreams);
        }
        *held += 1;
        let rx = channels
            .projects
            .entry(project_id)
            .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0)
            .subscribe();
        Ok(Subscription {
            rx: Some(rx),
            closing: self.0.closing.subscribe(),
            hub: self.0.clone(),
            token_id,
            project_id,
        })
    }

    /// Publishes a notice to every replica's streams of the project (best effort).
    pub async fn publish(&self, project_id: Uuid, notice: &serde_json::Value) {
        let Some(mut conn) = self.0.publisher.clone() else {
            return;
        };
        let cmd = redis::cmd("PUBLISH")
            .arg(channel(project_id))
            .arg(notice.to_string())
            .to_owned();
        let sent = tokio::time::timeout(self.0.timeout, cmd.query_async::<i64>(&mut conn)).await;
        if !matches!(sent, Ok(Ok(_))) {
            tracing::debug!(%project_id, "live notice not published (Redis unavailable)");
        }
    }

    /// Projects with a channel now (for tests and metrics).
    pub fn open_channels(&self) -> usize {
        lock(&self.0.channels).projects.len()
    }
}

fn lock(m: &Mutex<Channels>) -> std::sync::MutexGuard<'_, Channels> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Hands a published message to its project's streams, if it has any.
fn dispatch(hub: &Inner, channel_name: &str, payload: String) {
    let Some(project_id) = channel_name
        .strip_prefix("cairn:live:")
        .and_then(|id| Uuid::parse_str(id).ok())
    else {
        return;
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&payload) else {
        tracing::debug!(channel = channel_name, "live notice is not JSON; dropped");
        return;
    };
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("notice")
        .to_string();
    let channels = lock(&hub.channels);
    if let Some(sender) = channels.projects.get(&project_id) {
        // No receiver left is not an error: the last stream is closing.
        let _ = sender.send(Notice {
            kind: kind.into(),
            data: payload.into(),
        });
    }
}

/// One stream's share of its project's channel; leaving drops the channel
/// when it was the last, and frees the token's slot.
pub struct Subscription {
    rx: Option<broadcast::Receiver<Notice>>,
    closing: watch::Receiver<bool>,
    hub: Arc<Inner>,
    token_id: Uuid,
    project_id: Uuid,
}

impl Subscription {
    /// The next notice; a stream that fell behind gets a `lagged` notice
    /// (`{"missed": n}`) in place of what it missed. `None` once the hub closes.
    pub async fn recv(&mut self) -> Option<Notice> {
        let rx = self.rx.as_mut()?;
        let received = tokio::select! {
            received = rx.recv() => received,
            _ = self.closing.wait_for(|closing| *closing) => return None,
        };
        match received {
            Ok(notice) => Some(notice),
            Err(broadcast::error::RecvError::Lagged(missed)) => Some(Notice {
                kind: "lagged".into(),
                data: serde_json::json!({ "type": "lagged", "missed": missed })
                    .to_string()
                    .into(),
            }),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        drop(self.rx.take());
        let mut channels = lock(&self.hub.channels);
        if channels
            .projects
            .get(&self.project_id)
            .is_some_and(|s| s.receiver_count() == 0)
        {
            channels.projects.remove(&self.project_id);
        }
        if let Some(held) = channels.streams_per_token.get_mut(&self.token_id) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                channels.streams_per_token.remove(&self.token_id);
            }
        }
    }
}

/// The hub a subscriber feeds, while it exists.
type HubRef = Weak<Inner>;

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(kind: &str) -> String {
        serde_json::json!({ "type": kind }).to_string()
    }

    #[tokio::test]
    async fn notices_reach_their_project_only_and_channels_go_with_their_last_stream() {
        let hub = Hub::without_redis(None, Duration::from_secs(1));
        let (a, b, token) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
        let mut first = hub.subscribe(token, a).unwrap();
        let second = hub.subscribe(token, a).unwrap();
        assert_eq!(hub.open_channels(), 1);
        dispatch(&hub.0, &channel(b), notice("for.b"));
        dispatch(&hub.0, &channel(a), notice("for.a"));
        dispatch(&hub.0, "cairn:live:not-a-uuid", notice("nobody"));
        dispatch(&hub.0, &channel(a), "not json".into());
        let got = first.recv().await.unwrap();
        assert_eq!(&*got.kind, "for.a");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), first.recv())
                .await
                .is_err()
        );
        drop(second);
        assert_eq!(hub.open_channels(), 1, "one stream of A is left");
        drop(first);
        assert_eq!(hub.open_channels(), 0, "the last stream took the channel with it");
    }

    #[tokio::test]
    async fn a_token_holds_a_bounded_number_of_streams() {
        let hub = Hub::without_redis(None, Duration::from_secs(1));
        let (project, token) = (Uuid::now_v7(), Uuid::now_v7());
        let mut held: Vec<Subscription> = (0..MAX_STREAMS_PER_TOKEN)
            .map(|_| hub.subscribe(token, project).unwrap())
            .collect();
        assert!(hub.subscribe(token, project).is_err());
        assert!(
            hub.subscribe(Uuid::now_v7(), project).is_ok(),
            "other tokens count apart"
        );
        held.pop();
        assert!(
            hub.subscribe(token, project).is_ok(),
            "a closed stream frees its slot"
        );
    }

    #[tokio::test]
    async fn closing_the_hub_ends_every_stream() {
        let hub = Hub::without_redis(None, Duration::from_secs(1));
        let mut open = hub.subscribe(Uuid::now_v7(), Uuid::now_v7()).unwrap();
        let waiting = tokio::spawn(async move { open.recv().await.is_none() });
        tokio::time::sleep(Duration::from_millis(20)).await;
        hub.close();
        assert!(waiting.await.unwrap());
        let mut late = hub.subscribe(Uuid::now_v7(), Uuid::now_v7()).unwrap();
        assert!(late.recv().await.is_none());
    }
}
