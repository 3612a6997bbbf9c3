//! What is indexed of a memory: its text by field (weighted for BM25F) and
//! the attributes every query filters on, so both arms apply the same
//! tenancy, state, time, kind and session conditions.

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Where a memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    Observation,
    Summary,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Observation => "observation",
            Source::Summary => "summary",
        }
    }
}

/// A memory's lifecycle state (migration 0014); summaries are always live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Live,
    Stale,
    Superseded,
    Merged,
    Archived,
}

impl State {
    pub fn parse(s: &str) -> State {
        match s {
            "stale" => State::Stale,
            "superseded" => State::Superseded,
            "merged" => State::Merged,
            "archived" => State::Archived,
            _ => State::Live,
        }
    }

    /// Merged and archived memories are found by id, never by search.
    pub fn searchable(self) -> bool {
        !matches!(self, State::Merged | State::Archived)
    }

    /// The factor of a score for the state: stale half, superseded a quarter.
    pub fn weight(self) -> f32 {
        match self {
            State::Stale => 0.5,
            State::Superseded => 0.25,
            _ => 1.0,
        }
    }
}

/// Field weights of BM25F: a term in the title counts as three in the
/// narrative. Tuned on the recall benchmark's tune set.
pub const FIELD_WEIGHTS: Fields<f32> = Fields {
    title: 3.0,
    facts: 2.0,
    files: 1.5,
    body: 1.0,
};

/// One value per field.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fields<T> {
    /// An observation's title; a summary's request (the prompt).
    pub title: T,
    /// An observation's facts and subtitle; a summary's learned and completed.
    pub facts: T,
    /// Paths read and modified.
    pub files: T,
    /// Narrative and content (commands, error lines); the rest of a summary.
    pub body: T,
}

/// A memory as the index sees it.
#[derive(Clone, Debug)]
pub struct Doc {
    pub id: Uuid,
    pub source: Source,
    pub attrs: Attrs,
    pub text: Fields<String>,
}

/// What queries filter on.
#[derive(Clone, Debug, PartialEq)]
pub struct Attrs {
    pub created_at: DateTime<Utc>,
    pub state: State,
    /// Observation type (`bugfix`, `note`, …); `None` for summaries.
    pub kind: Option<String>,
    pub session_id: Option<Uuid>,
    /// The factor of its score from feedback (`feedback_weight`); 1 without.
    pub feedback: f32,
    /// The member it is private to (a `private-first` project, not yet
    /// promoted); `None`: the team's.
    pub private_to: Option<Uuid>,
}

/// The factor of a memory's score from the feedback it has had: each
/// helpful mark +10 %, each misleading one −25 %, within ×0.25..×1.5.
pub fn feedback_weight(helpful: i32, misleading: i32) -> f32 {
    (1.0 + 0.1 * helpful as f32 - 0.25 * misleading as f32).clamp(0.25, 1.5)
}

impl Doc {
    /// An observation row's text, by field.
    #[allow(clippy::too_many_arguments)]
    pub fn observation(
        id: Uuid,
        attrs: Attrs,
        title: &str,
        subtitle: &str,
        facts: &[String],
        narrative: &str,
        content: &str,
        files: &[String],
    ) -> Doc {
        let mut facts_text = facts.join("\n");
        push_line(&mut facts_text, subtitle);
        let mut body = narrative.to_string();
        // Manual memories repeat their content as narrative: index it once.
        if content.trim() != narrative.trim() {
            push_line(&mut body, content);
        }
        Doc {
            id,
            source: Source::Observation,
            attrs,
            text: Fields {
                title: title.to_string(),
                facts: facts_text,
                files: files.join("\n"),
                body,
            },
        }
    }

    /// A summary row's text, by field.
    pub fn summary(
        id: Uuid,
        attrs: Attrs,
        request: &str,
        learned_completed: [&str; 2],
        rest: [&str; 3],
    ) -> Doc {
        let mut facts = String::new();
        for part in learned_completed {
            push_line(&mut facts, part);
        }
        let mut body = String::new();
        for part in rest {
            push_line(&mut body, part);
        }
        Doc {
            id,
            source: Source::Summary,
            attrs,
            text: Fields {
                title: request.to_string(),
                facts,
                files: String::new(),
                body,
            },
        }
    }
}

fn push_line(text: &mut String, part: &str) {
    let part = part.trim();
    if part.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(part);
}
