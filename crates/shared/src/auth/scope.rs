//! What a token may do.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Post agent events and sessions.
    Ingest,
    /// Read sessions, events, jobs and memory.
    Read,
    /// Manage the team's projects and tokens, operate jobs, purge memory.
    Admin,
    /// Manage every team of the deployment.
    Superadmin,
}

#[derive(Debug, thiserror::Error)]
#[error("unknown scope {0:?}; expected ingest, read, admin or superadmin")]
pub struct ScopeParseError(pub String);

impl Scope {
    pub const ALL: [Scope; 4] = [Scope::Ingest, Scope::Read, Scope::Admin, Scope::Superadmin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Ingest => "ingest",
            Scope::Read => "read",
            Scope::Admin => "admin",
            Scope::Superadmin => "superadmin",
        }
    }

    pub fn parse(s: &str) -> Result<Self, ScopeParseError> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| ScopeParseError(s.to_string()))
    }
}
