//! One lane per session (by hash, among a fixed number): a process sends one
//! one-statement write per session at a time, so events of one busy turn
//! queue here, in the process, instead of as waiters on the turn's job row
//! in Postgres, whose lock queue wakes every waiter at each release.

use std::hash::{BuildHasher, Hash};

use tokio::sync::{Mutex, MutexGuard};
use uuid::Uuid;

/// Enough that sessions rarely share a lane.
const LANES: usize = 256;

pub struct SessionLanes {
    lanes: Box<[Mutex<()>]>,
    hasher: std::collections::hash_map::RandomState,
}

impl Default for SessionLanes {
    fn default() -> Self {
        Self {
            lanes: (0..LANES).map(|_| Mutex::new(())).collect(),
            hasher: Default::default(),
        }
    }
}

impl SessionLanes {
    /// Waits for the session's lane.
    pub async fn enter(&self, project: Uuid, agent: &str, session: &str) -> MutexGuard<'_, ()> {
        let mut h = self.hasher.build_hasher();
        (project, agent, session).hash(&mut h);
        let i = (std::hash::Hasher::finish(&h) % LANES as u64) as usize;
        self.lanes[i].lock().await
    }
}
