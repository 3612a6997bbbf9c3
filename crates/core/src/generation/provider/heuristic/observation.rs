//! One observation per turn from its digest: type, title, facts, narrative,
//! concepts and files, marked as a heuristic extract.

use super::files::shown;
use super::xml::Element;
use crate::generation::prompt::digest::{Digest, Outcome};
use crate::generation::prompt::elide::{first_line, join_capped, truncate};

/// Longest title, in characters.
const TITLE_CHARS: usize = 80;
/// Longest fact, in characters.
const FACT_CHARS: usize = 300;
/// Most facts per observation.
const MAX_FACTS: usize = 20;
/// Most files named in one fact.
const FILES_PER_FACT: usize = 10;

/// The files of a turn as its title and facts name them (relative to the
/// repository; see [`shown`]).
struct Named {
    read: Vec<String>,
    modified: Vec<String>,
}

/// The observation of one turn, as XML.
pub(super) fn render(digest: &Digest, cwd: Option<&str>) -> String {
    let kind = kind(digest);
    let named = Named {
        read: shown(&digest.files_read, cwd),
        modified: shown(&digest.files_modified, cwd),
    };
    Element::new("observation")
        .text("type", kind)
        .text("title", &title(digest, &named))
        .text("subtitle", &subtitle(digest))
        .list("facts", "fact", &facts(digest, &named))
        .text("narrative", &narrative(digest))
        .list("concepts", "concept", &concepts(kind))
        .list("files_read", "file", &digest.files_read)
        .list("files_modified", "file", &digest.files_modified)
        .finish()
}

/// `bugfix` when a failing command later passed, `change` when files were
/// modified, else `discovery`.
fn kind(digest: &Digest) -> &'static str {
    if !digest.fixed_commands().is_empty() {
        "bugfix"
    } else if !digest.files_modified.is_empty() {
        "change"
    } else {
        "discovery"
    }
}

/// The prompt's first line, else what was modified, run or read.
fn title(digest: &Digest, named: &Named) -> String {
    let from_prompt = digest.prompt().and_then(|p| first_line(p, TITLE_CHARS));
    let fallback = || {
        let (verb, list) = if !named.modified.is_empty() {
            ("Modified", named.modified.clone())
        } else if !digest.commands.is_empty() {
            (
                "Ran",
                digest
                    .command_outcomes()
                    .iter()
                    .map(|(c, _)| c.to_string())
                    .collect(),
            )
        } else if !named.read.is_empty() {
            ("Read", named.read.clone())
        } else {
            return format!("{} tool calls", digest.tool_events);
        };
        let first = list
            .first()
            .and_then(|item| first_line(item, TITLE_CHARS))
            .unwrap_or_default();
        match list.len() {
            1 => format!("{verb} {first}"),
            n => format!("{verb} {first} and {} more", n - 1),
        }
    };
    truncate(&from_prompt.unwrap_or_else(fallback), TITLE_CHARS).into_owned()
}

/// `heuristic extract: 3 commands, 2 files modified, 1 file read`.
fn subtitle(digest: &Digest) -> String {
    format!(
        "heuristic extract: {}, {} modified, {} read",
        count(digest.commands.len(), "command"),
        count(digest.files_modified.len(), "file"),
        count(digest.files_read.len(), "file"),
    )
}

/// Commands with their outcome, errors, the lines of files read that the
/// turn spoke of, then the files.
fn facts(digest: &Digest, named: &Named) -> Vec<String> {
    let commands = digest.command_outcomes().into_iter().map(|(text, outcome)| {
        let text = first_line(text, FACT_CHARS).unwrap_or_default();
        match outcome {
            Outcome::Passed => format!("Ran `{text}`"),
            Outcome::Failed => format!("Ran `{text}`: failed"),
            Outcome::Fixed => format!("Ran `{text}`: failed, then passed"),
        }
    });
    let errors = digest.errors.iter().map(|e| format!("Error: {e}"));
    let noted = digest.noted.iter().cloned();
    let files = [("Modified", &named.modified), ("Read", &named.read)]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(verb, list)| format!("{verb}: {}", join_capped(list, FILES_PER_FACT)));
    commands
        .chain(errors)
        .chain(noted)
        .chain(files)
        .map(|fact| truncate(&fact, FACT_CHARS).into_owned())
        .take(MAX_FACTS)
        .collect()
}

/// What the agent did, what got fixed or stayed broken, and how this was made.
fn narrative(digest: &Digest) -> String {
    let mut did = Vec::new();
    if !digest.files_read.is_empty() {
        did.push(format!("read {}", count(digest.files_read.len(), "file")));
    }
    if !digest.commands.is_empty() {
        let failed = digest.failed_commands();
        let of_which = if failed > 0 {
            format!(" ({failed} failed)")
        } else {
            String::new()
        };
        did.push(format!(
            "ran {}{of_which}",
            count(digest.commands.len(), "command")
        ));
    }
    if !digest.files_modified.is_empty() {
        did.push(format!("modified {}", count(digest.files_modified.len(), "file")));
    }
    let mut out = match did.len() {
        0 => format!("The agent made {}.", count(digest.tool_events, "tool call")),
        _ => format!("The agent {}.", sentence_list(&did)),
    };
    let fixed = digest.fixed_commands();
    if let Some(first) = fixed.first().and_then(|c| first_line(c, FACT_CHARS)) {
        out.push_str(&format!(
            " `{first}` failed at first and passed later in the turn."
        ));
    } else if let Some(error) = digest.errors.last() {
        out.push_str(&format!(" The last error seen was: {error}"));
    }
    out.push_str(" Extracted heuristically from the tool events, without a model.");
    out
}

/// Concepts that go with the type.
fn concepts(kind: &str) -> Vec<String> {
    let list: &[&str] = match kind {
        "bugfix" => &["problem-solution", "what-changed"],
        "change" => &["what-changed"],
        _ => &["how-it-works"],
    };
    list.iter().map(|c| c.to_string()).collect()
}

/// `1 file`, `3 files`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `a`, `a and b`, `a, b and c`.
fn sentence_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
