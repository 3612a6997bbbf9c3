//! One tool event condensed to what is worth remembering, for observation
//! prompts: a Read as path, size and the lines that edits or errors of the
//! job point at (a short or config file whole); a command as its text, exit
//! status, head, notable lines and tail; Grep/Glob as pattern, count and
//! first hits; an Edit as its diff; a Write as path, size and head; a
//! TodoWrite as its items. Anything else falls back to `render`.

use serde_json::Value;

use super::elide::{elide, first_line, truncate};
use super::payload::{self, ToolKind};
use super::render::render_event;
use crate::generation::material::EventRecord;

/// A file read this short is shown whole.
const READ_WHOLE_CHARS: usize = 1_000;
/// Most characters shown of one Read, one config file's settings, one
/// command output, one diff.
const READ_CHARS: usize = 1_600;
const CONFIG_CHARS: usize = 6_000;
const OUTPUT_CHARS: usize = 1_800;
const DIFF_CHARS: usize = 1_400;
/// An output this short is shown whole.
const OUTPUT_WHOLE_CHARS: usize = 700;
/// Lines kept from the head and the tail of a long output.
const HEAD_LINES: usize = 4;
const TAIL_LINES: usize = 4;
/// Most notable lines (with their next line) kept from the middle of an output.
const NOTABLE_LINES: usize = 16;
/// Lines shown around a line an error points at.
const AROUND: usize = 2;
/// Most lines shown of one edited hunk inside a Read.
const HUNK_LINES: usize = 8;
/// Characters of a Grep's hits shown (at least `MIN_HITS` hits); files of a Glob.
const HITS_CHARS: usize = 1_000;
const MIN_HITS: usize = 3;
const FILES: usize = 8;
/// Longest command, path, pattern or hit shown on one line.
const LINE_CHARS: usize = 200;
/// Fallback budget per field for other tools.
const OTHER_FIELD_CHARS: usize = 1_000;
/// Config files keep their settings (non-comment lines), not their comments.
const CONFIG_EXTENSIONS: [&str; 9] = [
    "toml",
    "yaml",
    "yml",
    "json",
    "ini",
    "env",
    "cfg",
    "conf",
    "properties",
];

/// What the job's events point at inside files: the old text of edits and
/// `path:line` references in failed tools' output.
#[derive(Default)]
pub(crate) struct Pointers {
    /// (path, old text) of each edit.
    edits: Vec<(String, String)>,
    /// The text of every failed tool's error and output.
    failures: String,
}

impl Pointers {
    pub(crate) fn of(events: &[EventRecord]) -> Self {
        let mut pointers = Pointers::default();
        for event in events {
            if payload::tool_kind(event) == ToolKind::Modify
                && let Some(path) = payload::file_path(event)
            {
                for old in old_strings(event) {
                    pointers.edits.push((path.to_string(), old.to_string()));
                }
            }
            if payload::failed(event) {
                pointers.failures.push_str(&output_of(event));
                pointers.failures.push('\n');
            }
        }
        pointers
    }

    /// Line numbers (1-based) of `path` that failures name as `path:N`.
    fn lines_named(&self, path: &str, cwd: Option<&str>) -> Vec<usize> {
        let short = relative(path, cwd);
        let mut lines = Vec::new();
        for needle in [short, path] {
            let needle = format!("{needle}:");
            let mut rest = self.failures.as_str();
            while let Some(at) = rest.find(&needle) {
                rest = &rest[at + needle.len()..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(n) = digits.parse::<usize>()
                    && !lines.contains(&n)
                {
                    lines.push(n);
                }
            }
        }
        lines
    }
}

/// Event number `number` condensed; `cwd` is stripped from paths.
pub(crate) fn condense(number: usize, event: &EventRecord, pointers: &Pointers, cwd: Option<&str>) -> String {
    let name = payload::tool_name(event).unwrap_or("command");
    let body = match (name, payload::tool_kind(event)) {
        ("TodoWrite", _) => Some(todos(event)),
        (_, ToolKind::Read) => read(event, pointers, cwd),
        ("Grep", _) => Some(grep(event, cwd)),
        ("Glob" | "LS", _) => Some(glob(event, cwd)),
        ("Write", _) => write(event, cwd),
        (_, ToolKind::Modify) => edit(event, cwd),
        (_, ToolKind::Shell) => shell(event),
        _ => None,
    };
    match body {
        Some(body) => format!("### {number}. {body}"),
        None => render_event(number, event, OTHER_FIELD_CHARS),
    }
}

/// The items of a TodoWrite, `[x]` done, `[>]` in progress, `[ ]` pending;
/// also read by the routine filter to spot a repeated list.
pub(crate) fn todo_lines(event: &EventRecord) -> Vec<String> {
    let Some(items) = payload::tool_input(event)
        .and_then(|i| i.get("todos"))
        .and_then(Value::as_array)
    else {
        return vec![];
    };
    items
        .iter()
        .map(|item| {
            let mark = match item.get("status").and_then(Value::as_str) {
                Some("completed") => "[x]",
                Some("in_progress") => "[>]",
                _ => "[ ]",
            };
            let text = item.get("content").and_then(Value::as_str).unwrap_or_default();
            format!("{mark} {}", truncate(text.trim(), LINE_CHARS))
        })
        .collect()
}

fn todos(event: &EventRecord) -> String {
    let mut out = "TodoWrite".to_string();
    for line in todo_lines(event) {
        out.push('\n');
        out.push_str(&line);
    }
    out
}

/// A path relative to the working directory when it lies under it.
pub(crate) use cairn_shared::paths::relative;

fn read(event: &EventRecord, pointers: &Pointers, cwd: Option<&str>) -> Option<String> {
    let path = payload::file_path(event)?;
    let shown = relative(path, cwd);
    let failed = payload::failed(event);
    let Some(content) = payload::read_content(event) else {
        let status = if failed { " [failed]" } else { "" };
        let error = payload::error_line(event)
            .map(|e| format!("\n{e}"))
            .unwrap_or_default();
        return Some(format!("Read {shown}{status}{error}"));
    };
    let lines: Vec<&str> = content.lines().collect();
    let chars = content.chars().count();
    let mut out = format!("Read {shown} ({} lines, {chars} chars)", lines.len());
    if chars <= READ_WHOLE_CHARS {
        out.push('\n');
        out.push_str(content.trim_end());
        return Some(out);
    }
    if is_config(path) {
        let settings: Vec<&str> = lines
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| {
                let t = l.trim_start();
                !t.is_empty() && !t.starts_with('#') && !t.starts_with("//") && !t.starts_with(';')
            })
            .collect();
        out.push('\n');
        out.push_str(&elide(&settings.join("\n"), CONFIG_CHARS));
        return Some(out);
    }
    let mut wanted: Vec<(usize, usize)> = Vec::new();
    if let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) {
        wanted.push((first, first));
    }
    for (edited, old) in &pointers.edits {
        if !same_file(edited, path, cwd) {
            continue;
        }
        if let Some(at) = content.find(old.as_str()) {
            let start = content[..at]
                .lines()
                .count()
                .saturating_sub(usize::from(!content[..at].ends_with('\n')));
            let len = old.lines().count().clamp(1, HUNK_LINES);
            wanted.push((start.saturating_sub(1), start + len));
        }
    }
    for n in pointers.lines_named(path, cwd) {
        let at = n.saturating_sub(1);
        wanted.push((at.saturating_sub(AROUND), at + AROUND));
    }
    out.push_str(&numbered(&lines, wanted));
    Some(elide(&out, READ_CHARS).into_owned())
}

/// The chosen line ranges (0-based, inclusive), merged, as `N| text`, with
/// `…` between gaps.
fn numbered(lines: &[&str], mut wanted: Vec<(usize, usize)>) -> String {
    wanted.sort_unstable();
    let mut out = String::new();
    let mut next = 0;
    for (start, end) in wanted {
        let end = end.min(lines.len().saturating_sub(1));
        let start = start.max(next);
        if start > end || start >= lines.len() {
            continue;
        }
        if start > next {
            out.push_str("\n…");
        }
        for (i, line) in lines.iter().enumerate().take(end + 1).skip(start) {
            out.push_str(&format!("\n{}| {}", i + 1, truncate(line.trim_end(), LINE_CHARS)));
        }
        next = end + 1;
    }
    if next < lines.len() {
        out.push_str("\n…");
    }
    out
}

fn same_file(a: &str, b: &str, cwd: Option<&str>) -> bool {
    relative(a, cwd).trim_start_matches("./") == relative(b, cwd).trim_start_matches("./")
}

fn is_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    // A template of a config file is one too: `app.env.example`,
    // `settings.yaml.sample`, `config.toml.dist`, `.env.template`.
    let name = TEMPLATE_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(&name);
    name.starts_with(".env")
        || name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| CONFIG_EXTENSIONS.contains(&ext))
}

/// What a config file's template adds to its name.
const TEMPLATE_SUFFIXES: [&str; 5] = [".example", ".sample", ".dist", ".template", ".tmpl"];

fn grep(event: &EventRecord, cwd: Option<&str>) -> String {
    let pattern = payload::pattern(event).unwrap_or_default();
    let mut out = format!("Grep \"{}\"", truncate(pattern, LINE_CHARS));
    if let Some(path) = payload::file_path(event) {
        let shown = relative(path, cwd);
        if shown != path || cwd.is_none_or(|c| c.trim_end_matches('/') != path.trim_end_matches('/')) {
            out.push_str(&format!(" in {shown}"));
        }
    }
    let output = payload::tool_output(event);
    let hits: Vec<String> = match output {
        Some(o) => match o.get("content").and_then(Value::as_str).or_else(|| o.as_str()) {
            Some(text) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect(),
            None => names(o.get("filenames")),
        },
        None => vec![],
    };
    let count = output
        .and_then(|o| o.get("numLines").or_else(|| o.get("numFiles")))
        .and_then(Value::as_u64)
        .map_or(hits.len(), |n| n as usize);
    out.push_str(&format!(": {count} hits"));
    if let Some(files) = output.and_then(|o| o.get("numFiles")).and_then(Value::as_u64) {
        out.push_str(&format!(" in {files} files"));
    }
    let mut used = 0;
    let shown = hits
        .iter()
        .take_while(|hit| {
            used += hit.chars().count().min(LINE_CHARS) + 1;
            used <= HITS_CHARS
        })
        .count()
        .max(MIN_HITS);
    push_list(&mut out, &hits, shown, cwd);
    if payload::failed(event) {
        out.push_str(" [failed]");
    }
    out
}

fn glob(event: &EventRecord, cwd: Option<&str>) -> String {
    let name = payload::tool_name(event).unwrap_or("Glob");
    let target = payload::pattern(event)
        .or_else(|| payload::file_path(event))
        .unwrap_or_default();
    let output = payload::tool_output(event);
    let files = match output {
        Some(o) if o.get("filenames").is_some() => names(o.get("filenames")),
        Some(o) => payload::value_text(o).lines().map(str::to_string).collect(),
        None => vec![],
    };
    let mut out = format!(
        "{name} \"{}\": {} files",
        truncate(target, LINE_CHARS),
        files.len()
    );
    push_list(&mut out, &files, FILES, cwd);
    out
}

fn names(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The first `max` items, one a line, paths made relative; `(+N more)` after.
fn push_list(out: &mut String, items: &[String], max: usize, cwd: Option<&str>) {
    let prefix = cwd.map(|c| format!("{}/", c.trim_end_matches('/')));
    for item in items.iter().take(max) {
        let item = prefix
            .as_deref()
            .and_then(|p| item.strip_prefix(p))
            .unwrap_or(item);
        out.push('\n');
        out.push_str(&truncate(item, LINE_CHARS));
    }
    if items.len() > max {
        out.push_str(&format!("\n(+{} more)", items.len() - max));
    }
}

/// The `old_string`s of an Edit or MultiEdit.
fn old_strings(event: &EventRecord) -> Vec<&str> {
    let Some(input) = payload::tool_input(event) else {
        return vec![];
    };
    let one = input.get("old_string").and_then(Value::as_str);
    let many = input
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("old_string").and_then(Value::as_str));
    one.into_iter().chain(many).filter(|s| !s.is_empty()).collect()
}

fn edit(event: &EventRecord, cwd: Option<&str>) -> Option<String> {
    let input = payload::tool_input(event)?;
    let path = payload::file_path(event)?;
    let pairs: Vec<(&str, &str)> = match input.get("edits").and_then(Value::as_array) {
        Some(edits) => edits
            .iter()
            .map(|e| (str_of(e, "old_string"), str_of(e, "new_string")))
            .collect(),
        None => vec![(str_of(input, "old_string"), str_of(input, "new_string"))],
    };
    let name = payload::tool_name(event).unwrap_or("Edit");
    let mut out = format!("{name} {}", relative(path, cwd));
    if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
        out.push_str(" (all occurrences)");
    }
    if payload::failed(event) {
        out.push_str(" [failed]");
        if let Some(line) = payload::error_line(event) {
            out.push_str(&format!(": {line}"));
        }
    }
    let mut diff = String::new();
    for (old, new) in pairs {
        diff.push_str(&line_diff(old, new));
    }
    out.push_str(&elide(&diff, DIFF_CHARS));
    Some(out)
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The lines that differ between `old` and `new` (common leading and
/// trailing lines left out), as `- old` and `+ new` lines.
pub(crate) fn line_diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = String::new();
    for line in &a[head..a.len() - tail] {
        out.push_str(&format!("\n- {}", line.trim_end()));
    }
    for line in &b[head..b.len() - tail] {
        out.push_str(&format!("\n+ {}", line.trim_end()));
    }
    out
}

fn write(event: &EventRecord, cwd: Option<&str>) -> Option<String> {
    let path = payload::file_path(event)?;
    let content = payload::tool_input(event)
        .map(|i| str_of(i, "content"))
        .unwrap_or_default();
    let mut out = format!(
        "Write {} ({} lines, {} chars)",
        relative(path, cwd),
        content.lines().count(),
        content.chars().count()
    );
    if payload::failed(event) {
        out.push_str(" [failed]");
    }
    let head: String = content.lines().take(12).collect::<Vec<_>>().join("\n");
    if !head.trim().is_empty() {
        out.push('\n');
        out.push_str(&elide(&head, 600));
    }
    Some(out)
}

/// A command: its text, `[failed, exit N]` or `[exit N]`, then its output
/// whole when short, else head, notable lines and tail.
fn shell(event: &EventRecord) -> Option<String> {
    let command = payload::command(event)?;
    let mut out = format!("{}: ", payload::tool_name(event).unwrap_or("Bash"));
    let shown: String = command.trim().lines().take(3).collect::<Vec<_>>().join(" ⏎ ");
    out.push_str(&truncate(&shown, LINE_CHARS * 2));
    let code = payload::exit_code(event).or_else(|| error_exit_code(event));
    match (payload::failed(event), code) {
        (true, Some(code)) => out.push_str(&format!(" [failed, exit {code}]")),
        (true, None) => out.push_str(" [failed]"),
        (false, Some(code)) if code != 0 => out.push_str(&format!(" [exit {code}]")),
        _ => {}
    }
    let text = output_of(event);
    let text = strip_exit_line(&text);
    if !text.trim().is_empty() {
        out.push('\n');
        out.push_str(&select_lines(text));
    }
    Some(out)
}

/// `Exit code N` at the start of a failure's `error`.
fn error_exit_code(event: &EventRecord) -> Option<i64> {
    let error = event.payload.get("error")?.as_str()?;
    first_line(error, 40)?
        .strip_prefix("Exit code ")?
        .trim()
        .parse()
        .ok()
}

fn strip_exit_line(text: &str) -> &str {
    let trimmed = text.trim_start();
    match trimmed.strip_prefix("Exit code ") {
        Some(rest) => rest.split_once('\n').map_or("", |(_, after)| after),
        None => text,
    }
}

/// Everything a tool said: `error`, stdout, stderr, or the output as text.
fn output_of(event: &EventRecord) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(error) = event.payload.get("error").and_then(Value::as_str) {
        parts.push(error.to_string());
    }
    if let Some(output) = payload::tool_output(event) {
        match output {
            Value::Object(o) if o.contains_key("stdout") || o.contains_key("stderr") => {
                for key in ["stdout", "stderr"] {
                    if let Some(text) = o
                        .get(key)
                        .and_then(Value::as_str)
                        .filter(|t| !t.trim().is_empty())
                    {
                        parts.push(text.to_string());
                    }
                }
            }
            Value::Object(o) => {
                if let Some(text) = o.get("output").and_then(Value::as_str) {
                    parts.push(text.to_string());
                }
            }
            other => parts.push(payload::value_text(other).into_owned()),
        }
    }
    parts.join("\n")
}

/// A line worth keeping from a long output: an error, a warning, a failure,
/// a panic, an assertion, a `-->` location or a test result.
fn notable(line: &str) -> bool {
    let l = line.trim().to_lowercase();
    l.starts_with("-->")
        || l.starts_with("test result")
        || l.starts_with("left:")
        || l.starts_with("right:")
        || [
            "error",
            "warning",
            "panicked",
            "assert",
            "exception",
            "traceback",
            "fatal",
            "denied",
            "not found",
        ]
        .iter()
        .any(|w| l.contains(w))
        || (l.contains("failed") && !l.contains(" 0 failed"))
        || line.contains("FAILED")
}

/// Short output whole; long output as its first lines, each notable line
/// and the one after it, and its last lines, with `…[N lines]…` for gaps.
fn select_lines(text: &str) -> String {
    let text = text.trim_end();
    if text.chars().count() <= OUTPUT_WHOLE_CHARS {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    let mut keep = vec![false; n];
    for k in keep.iter_mut().take(HEAD_LINES) {
        *k = true;
    }
    for k in keep.iter_mut().skip(n.saturating_sub(TAIL_LINES)) {
        *k = true;
    }
    let notable_at: Vec<usize> = (0..n)
        .filter(|&i| notable(lines[i]))
        .take(NOTABLE_LINES)
        .collect();
    for i in notable_at {
        keep[i] = true;
        if i + 1 < n {
            keep[i + 1] = true;
        }
    }
    let mut out = String::new();
    let mut gap = 0;
    for (i, line) in lines.iter().enumerate() {
        if keep[i] {
            if gap > 0 {
                out.push_str(&format!("…[{gap} lines]…\n"));
                gap = 0;
            }
            out.push_str(&elide(line.trim_end(), LINE_CHARS * 2));
            out.push('\n');
        } else {
            gap += 1;
        }
    }
    if gap > 0 {
        out.push_str(&format!("…[{gap} lines]…\n"));
    }
    elide(out.trim_end(), OUTPUT_CHARS).into_owned()
}

#[cfg(test)]
#[path = "condense_tests.rs"]
mod tests;
