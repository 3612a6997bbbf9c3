//! User text → what the SQL hands to `websearch_to_tsquery('english', …)`.
//!
//! `websearch_to_tsquery` never fails on syntax (quotes make phrases, `or`
//! makes alternatives, a leading `-` negates, anything else is a word), so
//! the text is bound as a parameter, never spliced. Here it is only made
//! tidy: control characters (U+0000 cannot be stored or compared) become
//! spaces, whitespace is trimmed, and the length is capped.

/// Longer text is cut (at a character boundary): a search is a few words.
pub const MAX_QUERY_CHARS: usize = 500;

/// What to search for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terms {
    /// No text: list by the filters alone.
    None,
    /// Text with no letter or digit (`!!!`, `()`): it can match nothing.
    Nothing,
    /// Text for `websearch_to_tsquery`.
    Text(String),
}

pub fn terms(query: Option<&str>) -> Terms {
    let Some(query) = query else {
        return Terms::None;
    };
    let cleaned: String = query
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_QUERY_CHARS)
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() {
        Terms::None
    } else if !cleaned.chars().any(char::is_alphanumeric) {
        Terms::Nothing
    } else {
        Terms::Text(cleaned.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_text_is_no_query_and_punctuation_matches_nothing() {
        assert_eq!(terms(None), Terms::None);
        assert_eq!(terms(Some("  \t\n")), Terms::None);
        assert_eq!(terms(Some("!!! () & |")), Terms::Nothing);
    }

    #[test]
    fn text_is_kept_as_typed_but_tidied() {
        assert_eq!(
            terms(Some(" \"empty input\" or panic ")),
            Terms::Text("\"empty input\" or panic".into())
        );
        assert_eq!(terms(Some("a\0b")), Terms::Text("a b".into()));
        let long = "x".repeat(MAX_QUERY_CHARS + 50);
        assert_eq!(terms(Some(&long)), Terms::Text("x".repeat(MAX_QUERY_CHARS)));
        assert_eq!(
            terms(Some("é".repeat(600).as_str())),
            Terms::Text("é".repeat(MAX_QUERY_CHARS))
        );
    }
}
