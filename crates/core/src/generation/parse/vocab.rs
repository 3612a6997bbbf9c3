//! The closed vocabularies of COMPAT.md §3: observation types and concepts,
//! and how loosely written values are mapped onto them.

/// The observation types, in their stored spelling.
pub(crate) const KNOWN_TYPES: [&str; 8] = [
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
    "security_alert",
    "security_note",
];

/// The type given to an observation whose type is missing or unknown.
pub(crate) const FALLBACK_TYPE: &str = "discovery";

/// The concepts, in their stored spelling.
pub(crate) const KNOWN_CONCEPTS: [&str; 7] = [
    "how-it-works",
    "why-it-exists",
    "what-changed",
    "problem-solution",
    "gotcha",
    "pattern",
    "trade-off",
];

/// Lowercases `raw` and joins its words with `separator`, reading `-`, `_`
/// and whitespace all as word breaks: `Security-Alert` → `security_alert`.
fn canonical_spelling(raw: &str, separator: char) -> String {
    let lowered = raw.to_lowercase();
    let words = lowered.split(|c: char| c == '-' || c == '_' || c.is_whitespace());
    let mut out = String::with_capacity(lowered.len());
    for word in words.filter(|word| !word.is_empty()) {
        if !out.is_empty() {
            out.push(separator);
        }
        out.push_str(word);
    }
    out
}

/// The stored type for a written one; unknown or empty types become
/// [`FALLBACK_TYPE`].
pub(crate) fn normalize_type(raw: &str) -> String {
    let spelled = canonical_spelling(raw, '_');
    let known = KNOWN_TYPES.iter().find(|&&known| known == spelled);
    known.copied().unwrap_or(FALLBACK_TYPE).to_owned()
}

/// The stored concept for a written one, or `None` if it is not one of the
/// seven (unknown concepts are dropped).
pub(crate) fn normalize_concept(raw: &str) -> Option<&'static str> {
    let spelled = canonical_spelling(raw, '-');
    KNOWN_CONCEPTS.iter().find(|&&known| known == spelled).copied()
}
