//! The process's one Redis subscription: `PSUBSCRIBE cairn:live:*`, each
//! message handed to the hub. When Redis drops (or cannot be reached) it
//! reconnects with capped exponential backoff; streams stay open
//! meanwhile and simply receive nothing. Ends when the hub is dropped.

use std::time::Duration;

use futures::StreamExt;

use super::{HubRef, PATTERN, dispatch};

const FIRST_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(5);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const IDLE_CHECK: Duration = Duration::from_secs(30);

pub async fn run(hub: HubRef, client: redis::Client) {
    let mut retry = FIRST_RETRY;
    loop {
        if hub.strong_count() == 0 {
            return;
        }
        match subscribe(&client).await {
            Ok(pubsub) => {
                tracing::info!("live notices: subscribed to {PATTERN}");
                retry = FIRST_RETRY;
                let mut messages = pubsub.into_on_message();
                loop {
                    let msg = tokio::select! {
                        msg = messages.next() => msg,
                        // A quiet Redis still lets a dropped hub's subscriber end.
                        () = tokio::time::sleep(IDLE_CHECK) => {
                            if hub.strong_count() == 0 {
                                return;
                            }
                            continue;
                        }
                    };
                    let Some(msg) = msg else { break };
                    let Some(inner) = hub.upgrade() else {
                        return;
                    };
                    if let Ok(payload) = msg.get_payload::<String>() {
                        dispatch(&inner, msg.get_channel_name(), payload);
                    }
                }
                tracing::warn!("live notices: Redis subscription dropped; reconnecting");
            }
            Err(e) => tracing::warn!(error = %e, ?retry, "live notices: cannot subscribe to Redis; retrying"),
        }
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(MAX_RETRY);
    }
}

async fn subscribe(client: &redis::Client) -> anyhow::Result<redis::aio::PubSub> {
    let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, client.get_async_pubsub()).await??;
    tokio::time::timeout(CONNECT_TIMEOUT, pubsub.psubscribe(PATTERN)).await??;
    Ok(pubsub)
}
