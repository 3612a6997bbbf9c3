//! The recall data set: projects, sessions of turns and tool calls, and the
//! facts planted in them with their questions (format: bench/recall/README.md).

use std::path::Path;

use anyhow::{Context, bail, ensure};
use serde::Deserialize;

/// Which facts a run uses: `tune` may steer search blending, `eval` is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Set {
    Tune,
    Eval,
}

impl Set {
    pub fn as_str(self) -> &'static str {
        match self {
            Set::Tune => "tune",
            Set::Eval => "eval",
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    pub projects: Vec<Project>,
    pub sessions: Vec<Session>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Project {
    pub slug: String,
    pub name: String,
    pub set: Set,
    /// The agent's working directory; tool paths are relative to it.
    pub cwd: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    pub id: String,
    pub project: String,
    pub turns: Vec<Turn>,
    pub facts: Vec<Fact>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub prompt: String,
    pub tools: Vec<Tool>,
    /// The agent's final message (`Stop.last_assistant_message`).
    pub stop: String,
}

/// Text written as pieces: literal lines, or noise of about `bytes` bytes.
pub type Text = Vec<Piece>;

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Piece {
    Line(String),
    Noise { noise: String, bytes: usize },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "tool", deny_unknown_fields)]
pub enum Tool {
    Read {
        path: String,
        content: Text,
    },
    Bash {
        command: String,
        #[serde(default)]
        stdout: Text,
        #[serde(default)]
        stderr: Text,
        /// Non-zero: the call is reported as a `PostToolUseFailure`.
        #[serde(default)]
        exit: i32,
    },
    Edit {
        path: String,
        old: String,
        new: String,
    },
    Write {
        path: String,
        content: Text,
    },
    Grep {
        pattern: String,
        content: Text,
    },
    Glob {
        pattern: String,
        files: Vec<String>,
    },
    TodoWrite {
        todos: Vec<Todo>,
    },
}

#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    pub content: String,
    pub status: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub id: String,
    /// `error`, `config`, `decision` or `change`: where it was planted.
    pub kind: String,
    pub check: Check,
    pub questions: Vec<String>,
}

/// What a text must hold to carry a fact: one string, or every keyword.
/// Compared case-insensitively, runs of whitespace as one space.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub all: Vec<String>,
}

impl Check {
    fn needles(&self) -> Vec<String> {
        self.text.iter().chain(&self.all).map(|s| normalise(s)).collect()
    }

    /// Whether `haystack` carries the fact.
    pub fn found_in(&self, haystack: &str) -> bool {
        let hay = normalise(haystack);
        let needles = self.needles();
        !needles.is_empty() && needles.iter().all(|n| hay.contains(n.as_str()))
    }
}

/// Lower case, whitespace runs as one space.
pub fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl Dataset {
    pub fn load(path: &Path) -> anyhow::Result<Dataset> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    pub fn project(&self, slug: &str) -> Option<&Project> {
        self.projects.iter().find(|p| p.slug == slug)
    }

    pub fn set_of(&self, session: &Session) -> Set {
        self.project(&session.project).map_or(Set::Eval, |p| p.set)
    }

    /// Appends `other`'s projects and sessions.
    pub fn extend(&mut self, other: Dataset) {
        self.projects.extend(other.projects);
        self.sessions.extend(other.sessions);
    }

    /// Only the projects (and their sessions) of the sets in `sets`.
    pub fn only(mut self, sets: &[Set]) -> Dataset {
        self.projects.retain(|p| sets.contains(&p.set));
        let keep: Vec<String> = self.projects.iter().map(|p| p.slug.clone()).collect();
        self.sessions.retain(|s| keep.contains(&s.project));
        self
    }

    pub fn fact_count(&self) -> usize {
        self.sessions.iter().map(|s| s.facts.len()).sum()
    }

    /// Refuses a data set that would measure nothing: unknown projects,
    /// duplicate ids, facts without 1–3 questions, a question that passes
    /// its own fact's check, a check not planted in its session's events or also
    /// found in another session's. `events_text` is a session's hook events
    /// as text (see `events::session_text`).
    pub fn validate(&self, events_text: impl Fn(&Session) -> String) -> anyhow::Result<()> {
        let mut ids = std::collections::HashSet::new();
        for p in &self.projects {
            ensure!(
                ids.insert(format!("p:{}", p.slug)),
                "duplicate project {}",
                p.slug
            );
        }
        let texts: Vec<String> = self.sessions.iter().map(&events_text).collect();
        for (i, s) in self.sessions.iter().enumerate() {
            ensure!(ids.insert(format!("s:{}", s.id)), "duplicate session {}", s.id);
            ensure!(
                self.project(&s.project).is_some(),
                "session {}: unknown project {}",
                s.id,
                s.project
            );
            ensure!(!s.turns.is_empty(), "session {} has no turns", s.id);
            for f in &s.facts {
                ensure!(ids.insert(format!("f:{}", f.id)), "duplicate fact {}", f.id);
                ensure!(!f.check.needles().is_empty(), "fact {}: empty check", f.id);
                ensure!(
                    (1..=3).contains(&f.questions.len()),
                    "fact {}: {} questions (1–3)",
                    f.id,
                    f.questions.len()
                );
                for q in &f.questions {
                    if f.check.found_in(q) {
                        bail!("fact {}: question {q:?} contains its own answer", f.id);
                    }
                }
                ensure!(
                    f.check.found_in(&texts[i]),
                    "fact {}: check not found in session {}'s events",
                    f.id,
                    s.id
                );
                for (j, other) in self.sessions.iter().enumerate() {
                    ensure!(
                        j == i || other.project != s.project || !f.check.found_in(&texts[j]),
                        "fact {}: check also found in session {} of the same project",
                        f.id,
                        other.id
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dataset(question: &str, planted: &str) -> Dataset {
        serde_json::from_value(serde_json::json!({
            "projects": [{ "slug": "p", "name": "p", "set": "eval", "cwd": "/w" }],
            "sessions": [
                { "id": "a", "project": "p", "facts": [{ "id": "f", "kind": "config",
                    "check": { "all": ["timeout_ms", "4711"] }, "questions": [question] }],
                  "turns": [{ "prompt": "x", "tools": [], "stop": planted }] },
                { "id": "b", "project": "p", "facts": [],
                  "turns": [{ "prompt": "y", "tools": [], "stop": "nothing" }] }
            ]
        }))
        .unwrap()
    }

    /// A session's text for validation: its final messages.
    fn stops(s: &Session) -> String {
        s.turns
            .iter()
            .map(|t| t.stop.clone())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn checks_match_every_keyword_whatever_the_case_and_spacing() {
        let check = Check {
            text: Some("Half-to-even".into()),
            all: vec!["money.rs".into()],
        };
        assert!(check.found_in("rounded with HALF-TO-EVEN in\n src/money.rs"));
        assert!(!check.found_in("rounded with half-to-even"));
        let spaced = Check {
            text: Some("max_attempts = 7".into()),
            all: vec![],
        };
        assert!(spaced.found_in("max_attempts   =\t7"));
        assert!(
            !Check {
                text: None,
                all: vec![]
            }
            .found_in("anything")
        );
    }

    #[test]
    fn validation_refuses_data_that_would_measure_nothing() {
        let good = dataset("How long before a call gives up?", "set timeout_ms to 4711");
        good.validate(stops).unwrap();
        let answer_in_question = dataset("Is timeout_ms 4711?", "set timeout_ms to 4711");
        assert!(answer_in_question.validate(stops).is_err());
        let not_planted = dataset("How long before a call gives up?", "set timeout_ms to 10");
        assert!(not_planted.validate(stops).is_err());
        let mut ambiguous = dataset("How long before a call gives up?", "set timeout_ms to 4711");
        ambiguous.sessions[1].turns[0].stop = "timeout_ms 4711 too".into();
        assert!(ambiguous.validate(stops).is_err());
        let mut no_question = good.clone();
        no_question.sessions[0].facts[0].questions.clear();
        assert!(no_question.validate(stops).is_err());
    }
}
