//! Privacy filter applied to agent hook payloads before anything is stored,
//! on the server (ingest) and at the edge (`cairn hook`), with the same code.
//!
//! Every string in a payload goes through three steps:
//! 1. private spans are removed: `<private>…</private>` and the memory blocks
//!    injected into agents (`<cairn-context>`, `<claude-mem-context>`), so
//!    injected memory never echoes back into storage;
//! 2. secrets are replaced by `[REDACTED:<kind>]` (see `secrets.rs` for the kinds);
//! 3. strings longer than [`PrivacyConfig::max_field_bytes`] keep a head and a tail.
//!
//! The filter is built once (regexes compiled in [`PrivacyFilter::new`]) and
//! shared; clean strings cost about one scan and are not copied.

mod checks;
mod entropy;
mod private_tags;
mod redactor;
mod report;
mod rule_set;
mod secrets;
mod size_cap;
mod skip;

#[cfg(test)]
mod command_tests;
#[cfg(test)]
mod gates_tests;
#[cfg(test)]
mod labelled_tests;
#[cfg(test)]
mod secret_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod token_tests;

pub use report::FilterReport;

use serde_json::Value;

use private_tags::PrivateTags;
use redactor::SecretRedactor;
use skip::SkipList;

/// Default for [`PrivacyConfig::max_field_bytes`]: 16 KiB.
pub const DEFAULT_MAX_FIELD_BYTES: usize = 16 * 1024;

/// Smallest effective [`PrivacyConfig::max_field_bytes`]; lower settings are
/// raised to it so that redaction and elision markers always fit.
pub const MIN_FIELD_BYTES: usize = 64;

/// Bound on redact-then-recap rounds after a cut (see `settle_capped`).
const SETTLE_ROUNDS: usize = 3;

/// Kind counted when a whole string value is redacted because its object key
/// names a secret (`{"api_key": "…"}`), as for `NAME=value` lines.
const KEYED_VALUE_KIND: &str = "env_assignment";

/// Settings of the privacy filter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PrivacyConfig {
    /// Tools whose events are not stored at all: exact names, or prefixes
    /// ending in `*` (`mcp__secret__*`); compared case-insensitively.
    pub skip_tools: Vec<String>,
    /// Largest string kept whole, in bytes; longer strings keep a head and a
    /// tail around an elision marker, within this budget. At least
    /// [`MIN_FIELD_BYTES`].
    pub max_field_bytes: usize,
}

impl Default for PrivacyConfig {
    fn default() -> Self {
        Self {
            skip_tools: Vec::new(),
            max_field_bytes: DEFAULT_MAX_FIELD_BYTES,
        }
    }
}

/// The compiled filter. Build once at startup and share (`Send + Sync`).
#[derive(Debug, Clone)]
pub struct PrivacyFilter {
    tags: PrivateTags,
    secrets: SecretRedactor,
    skip: SkipList,
    max_field_bytes: usize,
}

impl PrivacyFilter {
    pub fn new(config: PrivacyConfig) -> Self {
        Self {
            tags: PrivateTags::new(),
            secrets: SecretRedactor::new(),
            skip: SkipList::new(&config.skip_tools),
            max_field_bytes: config.max_field_bytes.max(MIN_FIELD_BYTES),
        }
    }

    /// Compiles everything that is otherwise compiled on first use. A
    /// long-lived server calls it once at start; the hook client, which
    /// lives for one event, does not.
    pub fn warm(&self) {
        self.tags.warm();
        self.secrets.warm();
    }

    /// Case-insensitive match against the skip list (exact tool names; also
    /// a trailing `*` prefix wildcard such as `mcp__secret__*`).
    pub fn is_skipped_tool(&self, tool_name: &str) -> bool {
        self.skip.matches(tool_name)
    }

    /// Filters every string inside the JSON value in place (object values and
    /// array items, at any depth; object keys untouched): 1) strip private
    /// tags, 2) redact secrets, 3) cap size. A string value whose key names a
    /// secret (`"password"`, `"api_key"`, `"Authorization"`, …) is redacted
    /// whole. Returns what was done.
    pub fn filter_value(&self, value: &mut Value) -> FilterReport {
        let mut report = FilterReport::default();
        // An explicit stack: deeply nested values cannot overflow the call stack.
        let mut pending: Vec<(Option<&str>, &mut Value)> = vec![(None, value)];
        while let Some((key, value)) = pending.pop() {
            match value {
                Value::String(text) => {
                    if let Some(filtered) = self.filter_str(text, key, &mut report) {
                        *text = filtered;
                    }
                }
                Value::Array(items) => pending.extend(items.iter_mut().map(|v| (None, v))),
                Value::Object(map) => {
                    pending.extend(map.iter_mut().map(|(k, v)| (Some(k.as_str()), v)));
                }
                // A long number under a secret name (`"pin": 48213377`) is a secret too.
                Value::Number(n) => {
                    if key.is_some_and(|k| {
                        checks::is_sensitive_name(k) && checks::is_secret_value(k, &n.to_string())
                    }) {
                        report.add_redactions(KEYED_VALUE_KIND, 1);
                        *value = Value::String(redactor::marker(KEYED_VALUE_KIND));
                    }
                }
                Value::Null | Value::Bool(_) => {}
            }
        }
        report
    }

    /// Same three steps for a single string.
    pub fn filter_text(&self, text: &str) -> (String, FilterReport) {
        let mut report = FilterReport::default();
        let filtered = self.filter_str(text, None, &mut report);
        (filtered.unwrap_or_else(|| text.to_owned()), report)
    }

    /// True when the text has content and everything except whitespace is
    /// inside private tags (e.g. `"<private>x</private>  "`). Injected
    /// `<cairn-context>` / `<claude-mem-context>` blocks count as private.
    pub fn is_entirely_private(&self, text: &str) -> bool {
        self.tags.is_entirely_private(text)
    }

    /// The filtered text, or `None` when it is unchanged (no allocation then).
    fn filter_str(&self, text: &str, key: Option<&str>, report: &mut FilterReport) -> Option<String> {
        let mut current: Option<String> = None;
        if let Some((stripped, spans)) = self.tags.strip(text) {
            report.private_spans = report.private_spans.saturating_add(spans);
            current = Some(stripped);
        }
        if let Some(redacted) = self.secrets.redact(current.as_deref().unwrap_or(text), report) {
            current = Some(redacted);
        }
        if let Some(key) = key {
            let value = current.as_deref().unwrap_or(text);
            if !value.is_empty()
                && !value.contains(redactor::MARKER_PREFIX)
                && checks::is_sensitive_name(key)
                && checks::is_secret_value(key, value)
            {
                report.add_redactions(KEYED_VALUE_KIND, 1);
                current = Some(redactor::marker(KEYED_VALUE_KIND));
            }
        }
        let capped = size_cap::cap(current.as_deref().unwrap_or(text), self.max_field_bytes);
        if let Some((capped, elided)) = capped {
            report.elided_bytes = report.elided_bytes.saturating_add(elided);
            current = Some(self.settle_capped(capped, report));
        }
        current
    }

    /// A cut can turn a harmless fragment into something a rule matches (a
    /// `password: x` that now starts a line). Cuts avoid that where they can;
    /// this makes sure the stored text is a fixed point of the whole filter,
    /// so filtering it again changes nothing. Costs one extra scan of the
    /// capped text (only for strings over the budget).
    fn settle_capped(&self, mut capped: String, report: &mut FilterReport) -> String {
        for _ in 0..SETTLE_ROUNDS {
            let Some(redacted) = self.secrets.redact(&capped, report) else {
                break;
            };
            match size_cap::cap(&redacted, self.max_field_bytes) {
                Some((again, elided)) => {
                    report.elided_bytes = report.elided_bytes.saturating_add(elided);
                    capped = again;
                }
                None => return redacted,
            }
        }
        capped
    }
}
