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

/// Who reads memory, for the project setting `memoryVisibility`
/// (migration 0027): a memory private to its author is seen by that member
/// and by those who see everything (admins, who review; the embedding
/// program, which owns its database). The default sees the team's memory
/// only: nothing private leaks through a caller that forgot to say who it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Viewer {
    pub member_id: Option<Uuid>,
    pub sees_all: bool,
}

impl Viewer {
    /// Sees every memory (an admin, the embedding program, the generator).
    pub const ALL: Viewer = Viewer {
        member_id: None,
        sees_all: true,
    };

    /// A member, or (`None`) a service token: the team's memory and their own.
    pub fn member(member_id: Option<Uuid>) -> Self {
        Self {
            member_id,
            sees_all: false,
        }
    }

    /// Whether a memory private to `owner` (`None`: the team's) is visible.
    pub fn sees(&self, owner: Option<Uuid>) -> bool {
        match owner {
            None => true,
            Some(owner) => self.sees_all || self.member_id == Some(owner),
        }
    }

    /// The SQL condition that a row of `alias` (with `visibility` and
    /// `member_id`) is visible, with the viewer's member id bound at
    /// `$member` (uuid, or NULL) and whether it sees all at `$all` (bool).
    pub fn condition(alias: &str, member: usize, all: usize) -> String {
        format!("({alias}.visibility = 'team' OR {alias}.member_id = ${member}::uuid OR ${all}::bool)")
    }

    /// The SQL condition that a raw row (a session or an event, with
    /// `member_id` and `project_id`) is visible: in a `private-first`
    /// project to its author and to those who see all; elsewhere to the team.
    pub fn raw_condition(alias: &str, member: usize, all: usize) -> String {
        format!(
            "({alias}.member_id IS NULL OR {alias}.member_id = ${member}::uuid OR ${all}::bool
              OR NOT EXISTS (SELECT 1 FROM projects vp WHERE vp.id = {alias}.project_id
                             AND vp.memory_visibility = 'private-first'))"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_memory_is_seen_by_its_author_and_by_who_sees_all() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        assert!(Viewer::member(Some(a)).sees(Some(a)));
        assert!(!Viewer::member(Some(b)).sees(Some(a)));
        assert!(!Viewer::member(None).sees(Some(a)));
        assert!(!Viewer::default().sees(Some(a)));
        assert!(Viewer::ALL.sees(Some(a)));
        assert!(Viewer::member(None).sees(None), "the team's memory");
    }
}
