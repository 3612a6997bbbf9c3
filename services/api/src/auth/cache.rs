//! A short-lived cache of verified tokens. Entries live `ttl`, so a revocation
//! made on any replica takes effect everywhere within that time; the replica
//! that revokes drops its entry at once.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use uuid::Uuid;

use super::Auth;

pub struct TokenCache {
    ttl: Duration,
    entries: Mutex<HashMap<Uuid, (Instant, Auth)>>,
}

impl TokenCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, id: Uuid) -> Option<Auth> {
        let entries = self.entries.lock().unwrap();
        entries
            .get(&id)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, auth)| auth.clone())
    }

    pub fn put(&self, auth: Auth) {
        let mut entries = self.entries.lock().unwrap();
        if entries.len() > 10_000 {
            let ttl = self.ttl;
            entries.retain(|_, (at, _)| at.elapsed() < ttl);
        }
        entries.insert(auth.token_id, (Instant::now(), auth));
    }

    pub fn forget(&self, id: Uuid) {
        self.entries.lock().unwrap().remove(&id);
    }
}
