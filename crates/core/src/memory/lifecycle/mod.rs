//! The memory lifecycle: the states an observation can be in, the
//! transitions between them, and the only statements that move one. Each
//! transition writes the new state and its `memory_changes` row in the same
//! statement; nothing is deleted, and every change but a restore can be
//! reverted. The schema refuses any other move (`observations_state_guard`,
//! migration 0024), and a test fails when a statement outside this module
//! writes a state.
//!
//! ```text
//!            stale (read at another version; a later turn changed its files)
//!    live ─────────────────────────────────────────▶ stale
//!     │  supersede (a later turn of the same kind changed its files)
//!     ├──────────────────────────────────────────▶ superseded
//!     │  merge (a newer near-duplicate)              │
//!     ├─────────────────▶ merged ◀── merge ── stale   │
//!     │  archive (retention)                         │
//!     └─────────────────▶ archived ◀── archive ── stale, superseded
//!    restore: any change undone — back to the state before it
//! ```
//!
//! | transition | statement |
//! |---|---|
//! | `stale` on read | [`read::file_seen`] |
//! | `stale`, `supersede` on a turn's edits | [`completion::REMARK_ON_COMPLETION`] |
//! | `merge` | [`merge::once`] |
//! | `archive` | [`archive::once`] |
//! | `restore` | [`revert::revert`] |

pub mod archive;
pub mod completion;
pub mod merge;
pub mod orphan;
pub mod read;
pub mod revert;

use serde::Serialize;

/// Where an observation is in its life. Only `live` and `stale` memories are
/// found; `live` ones are injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, sqlx::Type)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[sqlx(type_name = "text", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum MemoryState {
    Live,
    Stale,
    Superseded,
    Merged,
    Archived,
}

impl MemoryState {
    pub const ALL: [MemoryState; 5] = [
        MemoryState::Live,
        MemoryState::Stale,
        MemoryState::Superseded,
        MemoryState::Merged,
        MemoryState::Archived,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryState::Live => "live",
            MemoryState::Stale => "stale",
            MemoryState::Superseded => "superseded",
            MemoryState::Merged => "merged",
            MemoryState::Archived => "archived",
        }
    }
}

/// What moved an observation, as `memory_changes.action` records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, sqlx::Type)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[sqlx(type_name = "text", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Stale,
    Supersede,
    Merge,
    Archive,
    Restore,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Stale => "stale",
            Action::Supersede => "supersede",
            Action::Merge => "merge",
            Action::Archive => "archive",
            Action::Restore => "restore",
        }
    }
}

use Action as A;
use MemoryState as S;

/// Every move an observation may make: (from, to, by). A restore reverses
/// one of the others.
pub const TRANSITIONS: &[(MemoryState, MemoryState, Action)] = &[
    (S::Live, S::Stale, A::Stale),
    (S::Live, S::Superseded, A::Supersede),
    (S::Live, S::Merged, A::Merge),
    (S::Stale, S::Merged, A::Merge),
    (S::Live, S::Archived, A::Archive),
    (S::Stale, S::Archived, A::Archive),
    (S::Superseded, S::Archived, A::Archive),
    (S::Stale, S::Live, A::Restore),
    (S::Superseded, S::Live, A::Restore),
    (S::Merged, S::Live, A::Restore),
    (S::Merged, S::Stale, A::Restore),
    (S::Archived, S::Live, A::Restore),
    (S::Archived, S::Stale, A::Restore),
    (S::Archived, S::Superseded, A::Restore),
];

/// The action that may move an observation from `from` to `to`, if any.
pub fn action(from: MemoryState, to: MemoryState) -> Option<Action> {
    TRANSITIONS
        .iter()
        .find(|(f, t, _)| *f == from && *t == to)
        .map(|(_, _, a)| *a)
}

/// The lifecycle as a Mermaid state diagram (`docs/memory-lifecycle.md`
/// holds it; a test keeps the two equal).
pub fn drawing() -> String {
    let mut out = String::from("stateDiagram-v2\n    [*] --> live\n");
    for (from, to, by) in TRANSITIONS {
        out.push_str(&format!(
            "    {} --> {}: {}\n",
            from.as_str(),
            to.as_str(),
            by.as_str()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_non_restore_move_can_be_restored() {
        for (from, to, by) in TRANSITIONS {
            if *by != Action::Restore {
                assert_eq!(action(*to, *from), Some(Action::Restore), "{from:?} → {to:?}");
            }
        }
    }

    #[test]
    fn only_found_states_move_on_and_nothing_stays_in_place() {
        for (from, to, _) in TRANSITIONS {
            assert_ne!(from, to);
        }
        assert_eq!(action(MemoryState::Merged, MemoryState::Archived), None);
        assert_eq!(action(MemoryState::Superseded, MemoryState::Stale), None);
    }
}
