//! Tenancy as the engine sees it: every call names the team and project it
//! acts on, already checked by the caller (the server's token check, or the
//! embedding program's own choice).

use uuid::Uuid;

/// The project a call acts on, already checked against the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectRef {
    pub team_id: Uuid,
    pub id: Uuid,
}
