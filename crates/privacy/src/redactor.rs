//! Secret redaction engine: the rules a text could match (`rule_set`: a
//! keyword scan, then one DFA or the candidates' own regexes), then
//! replacement by the matching rules only.

use std::sync::OnceLock;

use regex::Regex;

use super::checks::{self, Check};
use super::report::FilterReport;
use super::rule_set::RuleSet;
use super::secrets::RULES;

/// Strings shorter than this cannot hold any secret the rules know.
pub(super) const MIN_REDACT_LEN: usize = 8;

/// Upper bound on redaction rounds; each round after the first is rare and
/// only happens when a round changed something.
const MAX_ROUNDS: usize = 4;

/// Capacity of each search state of the rule set's lazy DFA, in bytes (the
/// crate's default is 2 MiB). The set of every rule needs many DFA states
/// on varied text (generated bindings, minified code); a cache that fills
/// is cleared and the search goes on, so a larger one clears less often.
/// Memory is only taken as states are built.
const SET_DFA_BYTES: usize = 8 << 20;

/// Start of every replacement. A captured value that starts with it is
/// already redacted and left alone. Assignment-style rules (`Check::EnvValue`,
/// `QuotedValue`, `YamlValue`) also leave values that merely contain one
/// (`"token": "Bearer [REDACTED:jwt]"`), so one secret is counted once.
pub(super) const MARKER_PREFIX: &str = "[REDACTED:";

/// One rule of the table. Its own regex (for captures) is compiled the first
/// time it is a candidate or a hit: a short-lived process such as
/// `cairn hook` then pays for the rules its text could match only.
#[derive(Debug, Clone)]
struct CompiledRule {
    kind: &'static str,
    pattern: &'static str,
    check: Check,
    compiled: OnceLock<Captures>,
}

#[derive(Debug, Clone)]
struct Captures {
    regex: Regex,
    /// Capture groups named `v1`, `v2`, ...: the part to replace.
    value_groups: Vec<usize>,
    /// Capture group named `name`, handed to the check.
    name_group: Option<usize>,
}

impl Captures {
    fn compile(pattern: &str) -> Self {
        let regex = Regex::new(pattern).expect("secret rule must compile");
        let mut value_groups = Vec::new();
        let mut name_group = None;
        for (i, name) in regex.capture_names().enumerate() {
            match name {
                Some("name") => name_group = Some(i),
                Some(n) if n.starts_with('v') => value_groups.push(i),
                _ => {}
            }
        }
        Self {
            regex,
            value_groups,
            name_group,
        }
    }
}

/// The compiled rule table. Cheap to share: regexes are `Send + Sync`.
#[derive(Debug, Clone)]
pub(super) struct SecretRedactor {
    any: std::sync::Arc<RuleSet>,
    rules: Vec<CompiledRule>,
}

impl SecretRedactor {
    pub(super) fn new() -> Self {
        let any = std::sync::Arc::new(RuleSet::new(
            RULES.iter().map(|r| (r.pattern, r.keywords)).collect(),
            SET_DFA_BYTES,
        ));
        let rules = RULES
            .iter()
            .map(|r| CompiledRule {
                kind: r.kind,
                pattern: r.pattern,
                check: r.check,
                compiled: OnceLock::new(),
            })
            .collect();
        Self { any, rules }
    }

    /// Compiles every rule now (a server does it once at start, so no
    /// request pays for a first compilation).
    pub(super) fn warm(&self) {
        self.any.warm();
        for rule in &self.rules {
            rule.captures();
        }
    }

    /// The rules that match somewhere in `source`: none when no gate opens;
    /// else by the DFA of every rule once it is built, or by each candidate's
    /// own regex (compiled on first use) until then.
    fn hits(&self, source: &str) -> Vec<usize> {
        let candidates = self.any.candidates(source);
        if candidates.is_empty() {
            return candidates;
        }
        if self.any.is_warm() {
            return self.any.matches(source).iter().map(|p| p.as_usize()).collect();
        }
        candidates
            .into_iter()
            .filter(|i| self.rules[*i].captures().regex.is_match(source))
            .collect()
    }

    /// The text with every secret replaced by `[REDACTED:<kind>]`, or `None`
    /// when nothing was redacted. Clean text costs one scan and no allocation.
    ///
    /// Rules run in table order, each on the previous one's output. Should a
    /// replacement change what an earlier rule sees, rounds repeat until
    /// nothing changes (in practice: one round, then one scan to confirm), so
    /// the result is a fixed point and filtering twice is a no-op.
    pub(super) fn redact(&self, text: &str, report: &mut FilterReport) -> Option<String> {
        if text.len() < MIN_REDACT_LEN {
            return None;
        }
        let mut current: Option<String> = None;
        for _ in 0..MAX_ROUNDS {
            let source = current.as_deref().unwrap_or(text);
            let hits = self.hits(source);
            if hits.is_empty() {
                break;
            }
            let mut changed: Option<String> = None;
            for index in hits {
                let Some(rule) = self.rules.get(index) else {
                    continue;
                };
                let source = changed.as_deref().or(current.as_deref()).unwrap_or(text);
                if let Some(next) = rule.apply(source, report) {
                    changed = Some(next);
                }
            }
            match changed {
                Some(next) => current = Some(next),
                None => break,
            }
        }
        current
    }
}

impl CompiledRule {
    fn captures(&self) -> &Captures {
        self.compiled.get_or_init(|| Captures::compile(self.pattern))
    }

    fn apply(&self, text: &str, report: &mut FilterReport) -> Option<String> {
        let compiled = self.captures();
        let mut out = String::new();
        let mut copied_to = 0;
        let mut count = 0u32;
        for caps in compiled.regex.captures_iter(text) {
            let Some(whole) = caps.get(0) else { continue };
            let secret = compiled
                .value_groups
                .iter()
                .find_map(|i| caps.get(*i))
                .unwrap_or(whole);
            let value = secret.as_str();
            let already_redacted = match self.check {
                Check::EnvValue | Check::QuotedValue | Check::YamlValue | Check::HighEntropy => {
                    value.contains(MARKER_PREFIX)
                }
                _ => value.starts_with(MARKER_PREFIX),
            };
            if value.is_empty() || already_redacted || secret.start() < copied_to {
                continue;
            }
            let name = compiled
                .name_group
                .and_then(|i| caps.get(i))
                .map_or("", |m| m.as_str());
            if !checks::accept(self.check, name, value) {
                continue;
            }
            if out.is_empty() {
                out.reserve(text.len());
            }
            out.push_str(&text[copied_to..secret.start()]);
            push_marker(&mut out, self.kind);
            copied_to = secret.end();
            count = count.saturating_add(1);
        }
        if count == 0 {
            return None;
        }
        out.push_str(&text[copied_to..]);
        report.add_redactions(self.kind, count);
        Some(out)
    }
}

pub(super) fn push_marker(out: &mut String, kind: &str) {
    out.push_str(MARKER_PREFIX);
    out.push_str(kind);
    out.push(']');
}

pub(super) fn marker(kind: &str) -> String {
    let mut out = String::with_capacity(MARKER_PREFIX.len() + kind.len() + 1);
    push_marker(&mut out, kind);
    out
}
