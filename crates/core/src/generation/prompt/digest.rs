//! What a run of events amounts to: prompts, tools used, files read and
//! modified, commands and their failures, errors, the last message. Built once
//! from the payload accessors; read by the summary prompts and by the
//! heuristic provider.

use std::collections::BTreeMap;

use super::payload::{self, ToolKind};

use crate::generation::material::EventRecord;

/// Most distinct error lines kept per digest.
pub(crate) const MAX_ERRORS: usize = 10;

/// One command run, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    /// The command as run, trimmed.
    pub text: String,
    pub failed: bool,
}

/// How the runs of one command went, judged by its last run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Never failed.
    Passed,
    /// The last run failed.
    Failed,
    /// The last run passed after an earlier one failed.
    Fixed,
}

/// The facts of a run of events (a turn, or a whole session).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Digest {
    /// The turn number of the first numbered event.
    pub prompt_number: Option<i32>,
    /// The user's prompts, in order.
    pub prompts: Vec<String>,
    /// How many outcomes each tool reported.
    pub tool_counts: BTreeMap<String, usize>,
    /// Tool outcomes seen (`PostToolUse`, `PostToolUseFailure`, …).
    pub tool_events: usize,
    /// Paths read or searched, first seen first, without repeats.
    pub files_read: Vec<String>,
    /// Paths written, first seen first, without repeats.
    pub files_modified: Vec<String>,
    pub commands: Vec<Command>,
    /// The first line of each distinct error, at most [`MAX_ERRORS`].
    pub errors: Vec<String>,
    /// The agent's last message (from the last `Stop`).
    pub last_message: Option<String>,
    /// Lines of the files read that the prompts or the last message speak
    /// of, as `path: line` ([`spoken_of`]).
    pub noted: Vec<String>,
}

impl Digest {
    /// Digests `events`, in order.
    pub fn of(events: &[EventRecord]) -> Self {
        let mut digest = Digest::default();
        for event in events {
            digest.add(event);
        }
        digest.noted = spoken_of(events, &digest);
        digest
    }

    /// The first prompt, if any.
    pub fn prompt(&self) -> Option<&str> {
        self.prompts.first().map(String::as_str)
    }

    /// Each distinct command once, in order of first run, with how its runs went.
    pub fn command_outcomes(&self) -> Vec<(&str, Outcome)> {
        let mut outcomes: Vec<(&str, Outcome)> = Vec::new();
        for command in &self.commands {
            let earlier = outcomes.iter().position(|(text, _)| *text == command.text);
            let outcome = match (command.failed, earlier.map(|i| outcomes[i].1)) {
                (true, _) => Outcome::Failed,
                (false, Some(Outcome::Failed | Outcome::Fixed)) => Outcome::Fixed,
                (false, _) => Outcome::Passed,
            };
            match earlier {
                Some(i) => outcomes[i].1 = outcome,
                None => outcomes.push((&command.text, outcome)),
            }
        }
        outcomes
    }

    /// Commands whose last run passed after an earlier run failed.
    pub fn fixed_commands(&self) -> Vec<&str> {
        self.command_outcomes()
            .into_iter()
            .filter(|(_, outcome)| *outcome == Outcome::Fixed)
            .map(|(text, _)| text)
            .collect()
    }

    /// How many commands failed.
    pub fn failed_commands(&self) -> usize {
        self.commands.iter().filter(|c| c.failed).count()
    }

    fn add(&mut self, event: &EventRecord) {
        if self.prompt_number.is_none() {
            self.prompt_number = event.prompt_number;
        }
        if let Some(prompt) = payload::prompt(event) {
            self.prompts.push(prompt.trim().to_string());
        }
        if let Some(message) = payload::last_assistant_message(event) {
            self.last_message = Some(message.to_string());
        }
        if payload::is_tool_outcome(event) {
            self.add_tool(event);
        }
    }

    fn add_tool(&mut self, event: &EventRecord) {
        self.tool_events += 1;
        let name = payload::tool_name(event).unwrap_or("command");
        *self.tool_counts.entry(name.to_string()).or_default() += 1;
        let failed = payload::failed(event);
        match payload::tool_kind(event) {
            ToolKind::Read | ToolKind::Search => push_unique(&mut self.files_read, payload::file_path(event)),
            ToolKind::Modify if !failed => push_unique(&mut self.files_modified, payload::file_path(event)),
            ToolKind::Shell => self.add_command(event, failed),
            ToolKind::Modify | ToolKind::Other => {}
        }
        if let Some(line) = payload::error_line(event)
            && self.errors.len() < MAX_ERRORS
        {
            push_unique(&mut self.errors, Some(&line));
        }
    }

    fn add_command(&mut self, event: &EventRecord, failed: bool) {
        if let Some(text) = payload::command(event) {
            self.commands.push(Command {
                text: text.trim().to_string(),
                failed,
            });
        }
    }
}

/// Lines noted per file read, and per digest.
const NOTED_PER_FILE: usize = 4;
const NOTED_LINES: usize = 8;
/// Longest line noted, in characters; longer ones are data, not settings.
const NOTED_LINE_CHARS: usize = 160;

/// The lines of the files read, the searches' matches and the commands'
/// output that share a word with what the user asked or the agent said at
/// the end (`max_attempts = 7` for "what's the retry policy?" answered with
/// "a bounded number of attempts"; a profiler's `120431 … slugify.py:14`
/// for "most of the time went to slugify"): the value a later question asks
/// for is usually in the file or the output, not in the answer. Words are
/// split as code is written (`max_attempts`, `readinessProbe`), compared
/// lower-case, 4 letters or more and not common English. A line that sets a
/// value ranks above a comment or heading, then by the distinct words it
/// shares, first in the text first among equals; the lines kept stay in
/// text order, at most [`NOTED_PER_FILE`] a text. A line of a file read
/// that matches one of the turn's searches counts as one word more: the
/// agent grepped for `_TTL_SECONDS`, then read the file where
/// `QUOTE_TTL_SECONDS=300` is, a line that may share no word with the
/// question.
fn spoken_of(events: &[EventRecord], digest: &Digest) -> Vec<String> {
    let spoken: std::collections::HashSet<String> = digest
        .prompts
        .iter()
        .chain(&digest.last_message)
        .flat_map(|text| words(text))
        .collect();
    if spoken.is_empty() {
        return vec![];
    }
    let searched = searched_for(events);
    let mut noted = Vec::new();
    for (label, content, source) in events.iter().filter_map(spoken_text) {
        // Every match of a search holds its pattern: its words tie nothing.
        let pattern: Vec<String> = match source {
            Source::Search(pattern) => words(pattern).collect(),
            Source::File | Source::Output => vec![],
        };
        let output = source != Source::File;
        let mut scored: Vec<((bool, usize), usize, &str)> = content
            .lines()
            .map(str::trim)
            .enumerate()
            .filter(|(_, line)| line.len() > 2 && line.chars().count() <= NOTED_LINE_CHARS)
            .filter_map(|(at, line)| {
                let mut shared: Vec<String> = words(line)
                    .filter(|w| spoken.contains(w) && !pattern.contains(w))
                    .collect();
                shared.sort_unstable();
                shared.dedup();
                // A line of a file read that the turn searched for is what
                // the agent was after, whatever its words.
                let sought = source == Source::File && searched.iter().any(|p| p.is_match(line));
                let shared = shared.len() + usize::from(sought);
                let value = sets_a_value(line);
                // Output is mostly progress ("test … ok") and matches: a
                // line of it sharing one word must hold a value.
                let enough = shared >= if output && !value { 2 } else { 1 };
                enough.then_some(((value, shared), at, line))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut best: Vec<(usize, &str)> = scored
            .into_iter()
            .take(NOTED_PER_FILE)
            .map(|(_, at, line)| (at, line))
            .collect();
        best.sort_unstable();
        for (_, line) in best {
            let entry = format!("{label}: {line}");
            if noted.len() < NOTED_LINES && !noted.contains(&entry) {
                noted.push(entry);
            }
        }
    }
    noted
}

/// The turn's search patterns (`_TTL_SECONDS`), as regular expressions:
/// those with three letters or digits or more that match something, not
/// every line (`.*`); a pattern that does not compile is taken literally,
/// and one searched for with grep's `-i` ignores case.
fn searched_for(events: &[EventRecord]) -> Vec<regex::Regex> {
    events
        .iter()
        .filter(|e| payload::is_tool_outcome(e) && payload::tool_kind(e) == ToolKind::Search)
        .filter_map(|e| {
            let any_case = payload::tool_input(e)
                .and_then(|i| i.get("-i"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            Some((payload::pattern(e)?.trim(), any_case))
        })
        .filter(|(p, _)| p.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .filter_map(|(p, any_case)| {
            let build = |p: &str| {
                regex::RegexBuilder::new(p)
                    .case_insensitive(any_case)
                    .size_limit(1 << 16)
                    .build()
            };
            build(p).or_else(|_| build(&regex::escape(p))).ok()
        })
        .filter(|re| !re.is_match(""))
        .collect()
}

/// Longest command shown before a line of its output, in characters.
const NOTED_COMMAND_CHARS: usize = 60;

/// Where a text [`spoken_of`] looks in comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source<'a> {
    /// A file read.
    File,
    /// A search's matches, with its pattern.
    Search(&'a str),
    /// A command's output.
    Output,
}

/// The text [`spoken_of`] looks in, with what it is labelled by: a file
/// read (its path), a search's matches (`grep <pattern>`), a command's
/// output (`$ <command>`).
fn spoken_text(event: &EventRecord) -> Option<(String, &str, Source<'_>)> {
    if !payload::is_tool_outcome(event) {
        return None;
    }
    match payload::tool_kind(event) {
        ToolKind::Read => Some((
            payload::file_path(event)?.to_string(),
            payload::read_content(event)?,
            Source::File,
        )),
        ToolKind::Search => {
            let pattern = payload::pattern(event).unwrap_or_default();
            Some((
                format!("grep {pattern}"),
                payload::read_content(event)?,
                Source::Search(pattern),
            ))
        }
        ToolKind::Shell => {
            let command: String = payload::command(event)?
                .trim()
                .chars()
                .take(NOTED_COMMAND_CHARS)
                .collect();
            Some((
                format!("$ {command}"),
                payload::shell_output(event)?,
                Source::Output,
            ))
        }
        ToolKind::Modify | ToolKind::Other => None,
    }
}

/// Whether a line sets something (`key = value`, `key: value`, a number in
/// it) rather than being a comment or a heading: those rank first. A `::`
/// path (`api::tests::x`) is not a `key: value`.
fn sets_a_value(line: &str) -> bool {
    let comment = ["#", "//", "--", ";", "/*", "*"]
        .iter()
        .any(|p| line.starts_with(p));
    let assigns = line.contains('=') || line.split_once(": ").is_some_and(|(_, v)| !v.trim().is_empty());
    !comment && (assigns || line.chars().any(|c| c.is_ascii_digit()))
}

/// The words of `text` as [`spoken_of`] compares them: stemmed as the
/// index stems them (`tokens` meets `tokenizer`).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(split_case)
        .map(|w| w.to_lowercase())
        .filter(|w| {
            w.chars().count() >= 4 && !w.chars().all(|c| c.is_ascii_digit()) && !COMMON.contains(&w.as_str())
        })
        .map(|w| match w.chars().all(char::is_alphabetic) {
            true => cairn_retrieval::tokenize::stem(&w),
            false => w,
        })
}

/// `readinessProbe` → `readiness`, `Probe`; `HTTPServer` stays whole.
fn split_case(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    for pair in chars.windows(2) {
        let ((_, a), (at, b)) = (pair[0], pair[1]);
        if a.is_lowercase() && b.is_uppercase() {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// Words too common in prompts and answers to tie them to a line.
const COMMON: &[&str] = &[
    "about", "after", "again", "also", "because", "been", "before", "being", "both", "change", "changed",
    "could", "does", "done", "each", "file", "files", "from", "have", "here", "into", "just", "like", "make",
    "more", "most", "much", "need", "nothing", "only", "other", "over", "please", "same", "should", "some",
    "still", "such", "tell", "than", "that", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "true", "false", "under", "used", "uses", "using", "very", "want", "were", "what",
    "when", "where", "which", "while", "will", "with", "without", "would", "your", "none", "null", "return",
    "self", "string",
];

/// Splits a session's events into turns: a turn starts at each
/// `UserPromptSubmit` and wherever the prompt number changes. Events without
/// a number stay with the turn they follow.
pub(crate) fn split_turns(events: &[EventRecord]) -> Vec<&[EventRecord]> {
    let mut turns = Vec::new();
    let mut start = 0;
    let mut number: Option<i32> = None;
    for (i, event) in events.iter().enumerate() {
        let renumbered = matches!((number, event.prompt_number), (Some(a), Some(b)) if a != b);
        if i > start && (event.event_type == "UserPromptSubmit" || renumbered) {
            turns.push(&events[start..i]);
            start = i;
            number = None;
        }
        number = number.or(event.prompt_number);
    }
    if start < events.len() {
        turns.push(&events[start..]);
    }
    turns
}

fn push_unique(list: &mut Vec<String>, item: Option<&str>) {
    if let Some(item) = item.map(str::trim).filter(|i| !i.is_empty())
        && !list.iter().any(|x| x == item)
    {
        list.push(item.to_string());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::generation::prompt::fixtures::event;

    fn numbered(mut e: EventRecord, n: Option<i32>) -> EventRecord {
        e.prompt_number = n;
        e
    }

    #[test]
    fn digest_collects_files_commands_and_fixes() {
        let events = vec![
            event("UserPromptSubmit", None, json!({"prompt": " fix it "})),
            event(
                "PostToolUse",
                Some("Read"),
                json!({"tool_input": {"file_path": "a.rs"}}),
            ),
            event(
                "PostToolUse",
                Some("Read"),
                json!({"tool_input": {"file_path": "a.rs"}}),
            ),
            event(
                "PostToolUseFailure",
                Some("Bash"),
                json!({"tool_input": {"command": "make"}, "error": "Exit code 2"}),
            ),
            event(
                "PostToolUse",
                Some("Edit"),
                json!({"tool_input": {"file_path": "b.rs"}}),
            ),
            event(
                "PostToolUse",
                Some("Bash"),
                json!({"tool_input": {"command": "make"}, "tool_response": {"stdout": "ok"}}),
            ),
            event("Stop", None, json!({"last_assistant_message": "done"})),
        ];
        let d = Digest::of(&events);
        assert_eq!(d.prompt(), Some("fix it"));
        assert_eq!(
            (d.files_read.clone(), d.files_modified.clone()),
            (vec!["a.rs".into()], vec!["b.rs".into()])
        );
        assert_eq!(
            (d.tool_events, d.tool_counts["Read"], d.failed_commands()),
            (5, 2, 1)
        );
        assert_eq!(d.fixed_commands(), vec!["make"]);
        assert_eq!(d.command_outcomes(), vec![("make", Outcome::Fixed)]);
        assert_eq!(d.errors, vec!["Exit code 2".to_string()]);
        assert_eq!(d.last_message.as_deref(), Some("done"));
    }

    #[test]
    fn outcomes_follow_the_last_run() {
        let run = |text: &str, failed| Command {
            text: text.into(),
            failed,
        };
        let d = Digest {
            commands: vec![
                run("a", true),
                run("b", false),
                run("a", false),
                run("c", false),
                run("c", true),
                run("a", true),
            ],
            ..Digest::default()
        };
        assert_eq!(
            d.command_outcomes(),
            vec![
                ("a", Outcome::Failed),
                ("b", Outcome::Passed),
                ("c", Outcome::Failed)
            ]
        );
        let d = Digest {
            commands: vec![run("a", false), run("a", true), run("a", false)],
            ..Digest::default()
        };
        assert_eq!(d.fixed_commands(), vec!["a"]);
    }

    #[test]
    fn turns_split_on_prompts_and_numbers() {
        let p = |n| numbered(event("UserPromptSubmit", None, json!({"prompt": "p"})), n);
        let t = |n| numbered(event("PostToolUse", Some("Read"), json!({})), n);
        let events = vec![
            t(None),
            p(Some(1)),
            t(Some(1)),
            t(None),
            t(Some(2)),
            p(Some(3)),
            t(Some(3)),
        ];
        let sizes: Vec<usize> = split_turns(&events).iter().map(|t| t.len()).collect();
        assert_eq!(sizes, vec![1, 3, 1, 2]);
        assert!(split_turns(&[]).is_empty());
    }

    fn read(path: &str, content: &str) -> EventRecord {
        event(
            "PostToolUse",
            Some("Read"),
            json!({"tool_input": {"file_path": path}, "tool_response": {"file": {"content": content}}}),
        )
    }

    #[test]
    fn lines_of_files_read_that_the_turn_spoke_of_are_noted() {
        let toml = "# Payment gateway client\n[gateway]\nendpoint = \"https://pay.example/v2\"\ntimeout_ms = 900\n[gateway.retry]\nmax_attempts = 7\nbackoff_base_ms = 350\nlog_level = \"info\"";
        let events = vec![
            event(
                "UserPromptSubmit",
                None,
                json!({"prompt": "What's the retry policy of the payment gateway client?"}),
            ),
            read("config/gateway.toml", toml),
            read(
                "deploy/api.yaml",
                "livenessProbe:\n  initialDelaySeconds: 45\nreplicas: 3",
            ),
            event(
                "Stop",
                None,
                json!({"last_assistant_message": "A bounded number of attempts with exponential backoff."}),
            ),
        ];
        let d = Digest::of(&events);
        assert_eq!(
            d.noted,
            vec![
                "config/gateway.toml: # Payment gateway client",
                "config/gateway.toml: [gateway.retry]",
                "config/gateway.toml: max_attempts = 7",
                "config/gateway.toml: backoff_base_ms = 350",
            ],
            "settings sharing attempts and backoff first, then the comment and heading sharing most; \
             in file order; the YAML shares nothing"
        );
        assert_eq!(split_case("readinessProbe"), vec!["readiness", "Probe"]);
        assert_eq!(split_case("HTTPServer"), vec!["HTTPServer"]);
        // Common words tie nothing: a prompt of them notes no line.
        let events = vec![
            event(
                "UserPromptSubmit",
                None,
                json!({"prompt": "what does this file do, please tell me"}),
            ),
            read("src/lib.rs", "// what this file does\nfn main() {}"),
        ];
        assert!(Digest::of(&events).noted.is_empty());
    }

    #[test]
    fn lines_of_searches_and_command_output_the_turn_spoke_of_are_noted() {
        let profile = "   ncalls  tottime  percall  cumtime\n     88    0.101    0.001    0.300 render.py:40(render_page)\n   120431    9.812    0.000   11.204 slugify.py:14(slugify)\n      1    0.000    0.000   11.900 {built-in method exec}";
        let events = vec![
            event(
                "UserPromptSubmit",
                None,
                json!({"prompt": "Rendering large markdown files is slow, profile it."}),
            ),
            event(
                "PostToolUse",
                Some("Bash"),
                json!({"tool_input": {"command": "python -m cProfile -s cumtime -m quill render big.md"},
                       "tool_response": {"stdout": profile, "stderr": ""}}),
            ),
            event(
                "PostToolUse",
                Some("Grep"),
                json!({"tool_input": {"pattern": "cache_dir"},
                       "tool_response": {"mode": "content", "content": "src/util.py:3:import os\nquill/themes.py:12:CACHE_DIR = Path(os.environ.get(\"QUILL_CACHE\", \"~/.cache/quill/themes-v2\"))"}}),
            ),
            event(
                "Stop",
                None,
                json!({"last_assistant_message": "Most of the time went to slugify; themes are cached under QUILL_CACHE."}),
            ),
        ];
        assert_eq!(
            Digest::of(&events).noted,
            vec![
                "$ python -m cProfile -s cumtime -m quill render big.md: 88    0.101    0.001    0.300 render.py:40(render_page)",
                "$ python -m cProfile -s cumtime -m quill render big.md: 120431    9.812    0.000   11.204 slugify.py:14(slugify)",
                "grep cache_dir: quill/themes.py:12:CACHE_DIR = Path(os.environ.get(\"QUILL_CACHE\", \"~/.cache/quill/themes-v2\"))",
            ],
            "the profiler's lines of the functions spoken of (`rendering` meets `render_page` by its stem), \
             and the search match naming the variable"
        );
        // A search's matches all hold its pattern: a match sharing only the
        // pattern's word with the turn is not noted.
        assert_eq!(
            noted_after(
                "What's the retry policy?",
                "Grep",
                json!({"tool_input": {"pattern": "retry"},
                       "tool_response": {"content": "src/io/event.rs:690: let retry = apply(&request)?;\nsrc/client.rs:41: retry_policy: RetryPolicy::bounded(7),"}}),
            ),
            vec!["grep retry: src/client.rs:41: retry_policy: RetryPolicy::bounded(7),"]
        );
        // A command's progress line sharing one word is not noted; a line
        // holding a value is, and words meet by their stems.
        assert_eq!(
            noted_after(
                "Why does the search tokenizer drop accented words?",
                "Bash",
                json!({"tool_input": {"command": "cargo test -p search"},
                       "tool_response": {"stdout": "test lexer::tests::splits_words ... ok\nquery tokens: ['caf']"}}),
            ),
            vec!["$ cargo test -p search: query tokens: ['caf']"]
        );
    }

    #[test]
    fn lines_of_files_read_that_the_turn_searched_for_are_noted() {
        let env = "# notify settings, with their defaults\nLOG_FORMAT=json\nQUOTE_TTL_SECONDS=300\nREDIS_URL=redis://localhost:6379/0";
        let turn = |pattern: &str| {
            vec![
                event(
                    "UserPromptSubmit",
                    None,
                    json!({"prompt": "Where does notify read its cache lifetime from?"}),
                ),
                event(
                    "PostToolUse",
                    Some("Grep"),
                    json!({"tool_input": {"pattern": pattern},
                           "tool_response": {"content": "src/config.rs:31:    let ttl = env_secs(\"QUOTE_TTL_SECONDS\")?;"}}),
                ),
                read("config/notify.env.example", env),
            ]
        };
        assert_eq!(
            Digest::of(&turn("_TTL_SECONDS")).noted,
            vec![
                "config/notify.env.example: # notify settings, with their defaults",
                "config/notify.env.example: QUOTE_TTL_SECONDS=300",
            ],
            "the setting grepped for, though it shares no word with the prompt; the comment names notify"
        );
        // A regular expression, as grep takes it.
        assert!(
            Digest::of(&turn("[A-Z]+_TTL_SECONDS"))
                .noted
                .contains(&"config/notify.env.example: QUOTE_TTL_SECONDS=300".to_string())
        );
        // Searched for ignoring case, as grep's -i does.
        let mut any_case = turn("quote_ttl");
        any_case[1] = event(
            "PostToolUse",
            Some("Grep"),
            json!({"tool_input": {"pattern": "quote_ttl", "-i": true}, "tool_response": {"content": ""}}),
        );
        assert_eq!(
            Digest::of(&turn("quote_ttl")).noted.len(),
            1,
            "case counts without -i"
        );
        assert!(
            Digest::of(&any_case)
                .noted
                .contains(&"config/notify.env.example: QUOTE_TTL_SECONDS=300".to_string())
        );
        // A pattern that matches every line, or too short to mean anything, ties nothing.
        for pattern in [".*", "=", "[a-z"] {
            assert_eq!(
                Digest::of(&turn(pattern)).noted,
                vec!["config/notify.env.example: # notify settings, with their defaults"],
                "{pattern}"
            );
        }
    }

    /// The lines noted of a turn: `prompt`, then one `tool` outcome.
    fn noted_after(prompt: &str, tool: &str, outcome: serde_json::Value) -> Vec<String> {
        let events = vec![
            event("UserPromptSubmit", None, json!({ "prompt": prompt })),
            event("PostToolUse", Some(tool), outcome),
        ];
        Digest::of(&events).noted
    }
}
