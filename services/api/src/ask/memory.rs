//! The memories a question is answered from: the project's best search hits
//! (hybrid when the server has embeddings), each cut to a few lines.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::search::Hit;

/// Characters of one memory's text given to the model (title excluded).
pub const TEXT_CHARS: usize = 600;

/// One retrieved memory, as the prompt and the citations show it.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    pub id: Uuid,
    /// `observation` or `summary`.
    pub source: &'static str,
    /// The observation's type, or the summary's scope.
    pub kind: String,
    pub title: String,
    pub text: String,
    pub created_at: DateTime<Utc>,
}

impl From<Hit> for Memory {
    fn from(hit: Hit) -> Self {
        match hit {
            Hit::Observation { row, .. } => {
                let mut text = row.facts.join("; ");
                if text.is_empty() {
                    text = row.narrative.clone();
                }
                Memory {
                    id: row.id,
                    source: "observation",
                    kind: row.kind,
                    title: row.title,
                    text: cut(&text, TEXT_CHARS),
                    created_at: row.created_at,
                }
            }
            Hit::Summary { row, .. } => {
                let text = [
                    row.learned.as_str(),
                    row.completed.as_str(),
                    row.next_steps.as_str(),
                ]
                .into_iter()
                .filter(|s| !s.trim().is_empty())
                .collect::<Vec<_>>()
                .join(" ");
                Memory {
                    id: row.id,
                    source: "summary",
                    kind: format!("{} summary", row.scope),
                    title: row.request,
                    text: cut(&text, TEXT_CHARS),
                    created_at: row.created_at,
                }
            }
        }
    }
}

/// At most `max` characters, on a character boundary, with `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn cut_keeps_whole_characters() {
        assert_eq!(cut("  héllo  ", 10), "héllo");
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("", 3), "");
    }
}
