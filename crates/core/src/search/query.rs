//! User text → what the SQL hands to `websearch_to_tsquery('english', …)`.
//!
//! A search is usually a question or a few words, not an expression: a hit
//! needs ANY of the words, not all of them, and matching more of them ranks
//! higher (cover density counts every matched word). So the text is split
//! into items — words, `"quoted phrases"`, and either one after a `-` as an
//! exclusion — and given back as two `websearch_to_tsquery` texts:
//!
//! - `any`: the wanted items joined with ` or ` (`what broke the nightly
//!   build` → `what or broke or the or nightly or build`; stop words then
//!   drop out in Postgres); a phrase stays a phrase (`"empty input" or panic`).
//! - `exclude`: the excluded items, also joined with ` or `; the statement
//!   keeps rows that do not match it (`NOT search @@ …`), so a `-word`
//!   excludes whatever else the text asks for.
//!
//! An `or` typed between words is dropped: every word is an alternative
//! already. Both texts are bound as parameters, never spliced;
//! `websearch_to_tsquery` never fails on syntax, and neither text can hold
//! a `"` out of place or an item that starts with `-`. Control characters
//! (U+0000 cannot be stored or compared) become spaces and the text is
//! capped in length first.

/// Longer text is cut (at a character boundary): a search is a few words.
pub const MAX_QUERY_CHARS: usize = 500;

/// The text of a query, split into what is wanted and what is excluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// Wanted items, ` or `-joined, for `websearch_to_tsquery`.
    pub any: String,
    /// Excluded items, ` or `-joined, or `None` when nothing is excluded.
    pub exclude: Option<String>,
}

/// What to search for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terms {
    /// No text: list by the filters alone.
    None,
    /// Text with no wanted letter or digit (`!!!`, `()`, only `-word`s): it can match nothing.
    Nothing,
    /// Text for `websearch_to_tsquery`.
    Text(Text),
}

/// One item of the text.
#[derive(Debug, PartialEq, Eq)]
struct Item {
    text: String,
    phrase: bool,
    excluded: bool,
}

impl Item {
    fn websearch(&self) -> String {
        if self.phrase {
            format!("\"{}\"", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// Words, phrases and exclusions, in the manner of `websearch_to_tsquery`:
/// a `"` opens a phrase that runs to the next `"` (or the end); a `-` at the
/// start of an item excludes it.
fn items(text: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut excluded = false;
        if c == '-' {
            chars.next();
            match chars.peek() {
                Some(&next) if !next.is_whitespace() => {
                    excluded = true;
                    while chars.peek() == Some(&'-') {
                        chars.next();
                    }
                }
                _ => continue,
            }
        }
        let phrase = chars.peek() == Some(&'"');
        let mut item = String::new();
        if phrase {
            chars.next();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                item.push(c);
            }
            item = item.split_whitespace().collect::<Vec<_>>().join(" ");
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '"' {
                    break;
                }
                item.push(c);
                chars.next();
            }
        }
        if item.is_empty() || (!phrase && !excluded && item.eq_ignore_ascii_case("or")) {
            continue;
        }
        items.push(Item {
            text: item,
            phrase,
            excluded,
        });
    }
    items
}

fn joined<'a>(items: impl Iterator<Item = &'a Item>) -> String {
    items.map(Item::websearch).collect::<Vec<_>>().join(" or ")
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
        return Terms::None;
    }
    let items = items(cleaned);
    let has_letters = |i: &&Item| i.text.chars().any(char::is_alphanumeric);
    let wanted: Vec<&Item> = items.iter().filter(|i| !i.excluded).filter(has_letters).collect();
    if wanted.is_empty() {
        return Terms::Nothing;
    }
    let excluded: Vec<&Item> = items.iter().filter(|i| i.excluded).filter(has_letters).collect();
    Terms::Text(Text {
        any: joined(wanted.into_iter()),
        exclude: (!excluded.is_empty()).then(|| joined(excluded.into_iter())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(any: &str, exclude: Option<&str>) -> Terms {
        Terms::Text(Text {
            any: any.into(),
            exclude: exclude.map(Into::into),
        })
    }

    #[test]
    fn blank_text_is_no_query_and_punctuation_matches_nothing() {
        assert_eq!(terms(None), Terms::None);
        assert_eq!(terms(Some("  \t\n")), Terms::None);
        assert_eq!(terms(Some("!!! () & |")), Terms::Nothing);
        assert_eq!(terms(Some("-panic -\"empty input\"")), Terms::Nothing);
        assert_eq!(terms(Some("or OR")), Terms::Nothing);
    }

    #[test]
    fn any_word_may_match() {
        assert_eq!(
            terms(Some("what broke the nightly build?")),
            text("what or broke or the or nightly or build?", None)
        );
        assert_eq!(terms(Some("parser or panic")), text("parser or panic", None));
    }

    #[test]
    fn phrases_stay_phrases_and_exclusions_are_apart() {
        assert_eq!(
            terms(Some(" \"empty  input\" or panic -lexer -\"old parser\" ")),
            text("\"empty input\" or panic", Some("lexer or \"old parser\""))
        );
        assert_eq!(
            terms(Some("a \"unterminated phrase")),
            text("a or \"unterminated phrase\"", None)
        );
        assert_eq!(terms(Some("x --y - z")), text("x or z", Some("y")));
        assert_eq!(terms(Some("mid\"quote\"s")), text("mid or \"quote\" or s", None));
        assert_eq!(terms(Some("src/parser.rs")), text("src/parser.rs", None));
    }

    #[test]
    fn text_is_tidied_and_capped() {
        assert_eq!(terms(Some("a\0b")), text("a or b", None));
        let long = "x".repeat(MAX_QUERY_CHARS + 50);
        assert_eq!(terms(Some(&long)), text(&"x".repeat(MAX_QUERY_CHARS), None));
        assert_eq!(
            terms(Some("é".repeat(600).as_str())),
            text(&"é".repeat(MAX_QUERY_CHARS), None)
        );
    }
}
