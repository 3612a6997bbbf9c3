//! Short-lived caches in front of the token table. Verified tokens live
//! `ttl`, so a revocation made on any replica takes effect everywhere within
//! that time; the replica that revokes drops its entry at once. Refused
//! tokens (unknown, revoked, wrong secret) are remembered for `bad_ttl`, so
//! replaying one costs no database lookup. A team's project names (id or
//! slug) are remembered too: a project's id and slug never change and
//! projects are not deleted, so a name once found keeps its project; a name
//! not found is not remembered (a project created on another replica is
//! found at once).

use std::time::Duration;

use moka::sync::Cache;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{Auth, ProjectRef};
use crate::error::ApiError;

pub struct TokenCache {
    good: Cache<Uuid, Auth>,
    bad: Cache<[u8; 32], (&'static str, &'static str)>,
    projects: Cache<(Uuid, String), ProjectRef>,
}

/// How long a project's name is remembered (only to bound the cache's age:
/// the name cannot change meanwhile).
const PROJECT_TTL: Duration = Duration::from_secs(600);

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl TokenCache {
    pub fn new(ttl: Duration, bad_ttl: Duration) -> Self {
        Self {
            good: Cache::builder().max_capacity(100_000).time_to_live(ttl).build(),
            bad: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(bad_ttl.max(Duration::from_millis(1)))
                .build(),
            projects: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(PROJECT_TTL)
                .build(),
        }
    }

    pub fn get(&self, id: Uuid) -> Option<Auth> {
        self.good.get(&id)
    }

    pub fn put(&self, auth: Auth) {
        self.good.insert(auth.token_id, auth);
    }

    pub fn forget(&self, id: Uuid) {
        self.good.invalidate(&id);
    }

    /// The team's project named `name` (id or slug), if it was found before.
    pub fn project(&self, team_id: Uuid, name: &str) -> Option<ProjectRef> {
        self.projects.get(&(team_id, name.to_string()))
    }

    pub fn put_project(&self, team_id: Uuid, name: &str, project: ProjectRef) {
        self.projects.insert((team_id, name.to_string()), project);
    }

    /// The refusal remembered for this token, if any.
    pub fn refused(&self, token: &str) -> Option<ApiError> {
        self.bad
            .get(&digest(token))
            .map(|(code, message)| ApiError::forbidden(code, message))
    }

    pub fn refuse(&self, token: &str, code: &'static str, message: &'static str) -> ApiError {
        self.bad.insert(digest(token), (code, message));
        ApiError::forbidden(code, message)
    }
}
