//! A Redis connection that never blocks start-up: it connects on first use
//! and reconnects in the background, with bounded timeouts, so a Redis
//! outage degrades hints and live views but stops nothing.

use std::time::Duration;

use redis::{
    Client,
    aio::{ConnectionManager, ConnectionManagerConfig},
};

pub fn lazy_connection(redis_url: &str, timeout: Duration) -> anyhow::Result<ConnectionManager> {
    let client = Client::open(redis_url)?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_secs(2));
    Ok(ConnectionManager::new_lazy_with_config(client, config)?)
}
