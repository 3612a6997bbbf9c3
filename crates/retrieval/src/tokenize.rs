//! Text → index terms, the same way for memories and for queries, tuned to
//! how developers write: code identifiers, paths, error codes and versions
//! are kept whole *and* split into their words, so `SESSION_TTL`,
//! `session ttl`, `sessionTtl` and `session_ttl` meet, `src/auth/session.ts`
//! is found by its path, its file name and its words, and `E0382` or
//! `ECONNREFUSED` stay one rare term.
//!
//! A chunk is a run of letters, digits and the joiners `_ - . / : \ @ #`;
//! joiners at its ends are dropped (a full stop ending a sentence). From a
//! chunk with an inner joiner the whole (lower-cased) chunk is a term, and
//! for a path its last segment too. Each run of letters and digits is then a
//! term, and a mixed-case run (`camelCase`, `HTTPServer`) also gives its
//! parts. Plain words are stemmed (Porter2: `failed`, `failing` → `fail`)
//! and English stop words dropped; words in capitals (`ECONNREFUSED`) and
//! anything with a digit or a joiner are kept as written (lower-cased).
//! Accents are folded (`café`, `Müller` → `cafe`, `muller`), as people
//! type them without: a letter's combining marks are dropped.

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

/// Longer terms are dropped (hashes, base64 blobs): nobody types them.
pub const MAX_TERM_CHARS: usize = 64;

const JOINERS: &[char] = &['_', '-', '.', '/', ':', '\\', '@', '#'];

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// English stop words (the usual list, with the question words a search is phrased in).
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "ever",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "s",
    "t",
    "ve",
    "ll",
    "re",
    "d",
    "m",
];

static STOP_SET: LazyLock<std::collections::HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.iter().copied().collect());

fn is_stop_word(word: &str) -> bool {
    STOP_SET.contains(word)
}

/// Every term of `text`, in order, repeats kept (term frequency counts).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in chunks(text) {
        if chunk.is_ascii() {
            chunk_terms(chunk, &mut out);
        } else {
            chunk_terms(&fold_accents(chunk), &mut out);
        }
    }
    out
}

/// `chunk` without combining marks: decomposed, marks dropped, recomposed
/// (so scripts whose letters decompose into non-marks, Hangul, stay whole).
fn fold_accents(chunk: &str) -> String {
    chunk.nfd().filter(|c| !is_combining_mark(*c)).nfc().collect()
}

/// `word` (lower-case letters) stemmed as the index stems it: `tokens`
/// and `tokenizer` are both `token`.
pub fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The distinct terms of a query, in first-seen order.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    terms(text)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

fn chunks(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || JOINERS.contains(&c)))
        .map(|c| c.trim_matches(JOINERS))
        .filter(|c| !c.is_empty())
}

fn chunk_terms(chunk: &str, out: &mut Vec<String>) {
    let compound = chunk.contains(JOINERS);
    if compound {
        push_raw(&chunk.to_lowercase(), out);
        if let Some((_, last)) = chunk.rsplit_once(['/', '\\'])
            && last.contains(|c: char| c.is_alphanumeric())
            && last.contains(JOINERS)
        {
            push_raw(&last.to_lowercase(), out);
        }
    }
    for run in chunk
        .split(|c: char| !c.is_alphanumeric())
        .filter(|r| !r.is_empty())
    {
        let parts = case_parts(run);
        if parts.len() > 1 {
            push_raw(&run.to_lowercase(), out);
        }
        for part in parts {
            push_word(part, out);
        }
    }
}

/// A term kept as written (lower-cased): compounds, and runs that were split.
fn push_raw(term: &str, out: &mut Vec<String>) {
    if term.chars().count() <= MAX_TERM_CHARS {
        out.push(term.to_string());
    }
}

/// A word: dropped when a stop word; stemmed when it is all letters and
/// not written in capitals (`ECONNREFUSED`, `HTTP` are names, not words).
fn push_word(part: &str, out: &mut Vec<String>) {
    let word = part.to_lowercase();
    if word.chars().count() > MAX_TERM_CHARS || is_stop_word(&word) {
        return;
    }
    let shouted =
        part.chars().filter(|c| c.is_alphabetic()).count() > 1 && !part.chars().any(char::is_lowercase);
    if word.chars().all(char::is_alphabetic) && !shouted {
        out.push(STEMMER.stem(&word).into_owned());
    } else {
        out.push(word);
    }
}

/// `camelCase` → `camel`, `Case`; `HTTPServer` → `HTTP`, `Server`;
/// `parseJSON2` → `parse`, `JSON2`. A run in one case (`ECONNREFUSED`,
/// `E0382`, `session`) is one part: digits never split a run.
fn case_parts(run: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase() && (prev.is_lowercase() || (prev.is_uppercase() && next_lower));
        if boundary {
            parts.push(&run[start..at]);
            start = at;
        }
    }
    parts.push(&run[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(text: &str, wanted: &[&str]) {
        let t = terms(text);
        for w in wanted {
            assert!(t.iter().any(|x| x == w), "{text:?} → {t:?} lacks {w:?}");
        }
    }

    #[test]
    fn accents_are_folded_the_same_way_in_memories_and_queries() {
        assert_eq!(terms("café"), terms("cafe"));
        assert_eq!(terms("Müller's naïve façade"), terms("Muller's naive facade"));
        has(
            "configuración_de_despliegue",
            &["configuracion_de_despliegue", "configuracion"],
        );
        has("src/Résumé.ts", &["src/resume.ts", "resume.ts"]);
        // Letters that are not accented stay as they are.
        assert_eq!(terms("ß 한국어 東京"), ["ß", "한국어", "東京"]);
    }

    #[test]
    fn identifiers_are_whole_and_split() {
        has("SESSION_TTL", &["session_ttl", "session", "ttl"]);
        has("sessionTtl", &["sessionttl", "session", "ttl"]);
        has("session_ttl", &["session_ttl", "session", "ttl"]);
        has("HTTPServer", &["httpserver", "http", "server"]);
        has("registry-creds", &["registry-creds", "registri", "cred"]);
        // The parts of each spelling meet.
        for spelling in ["SESSION_TTL", "sessionTtl", "session ttl", "session-ttl"] {
            has(spelling, &["session", "ttl"]);
        }
    }

    #[test]
    fn paths_are_whole_by_file_name_and_by_word() {
        has(
            "edited src/auth/session.ts today",
            &[
                "src/auth/session.ts",
                "session.ts",
                "src",
                "auth",
                "session",
                "ts",
            ],
        );
        has(
            "scripts/rotate-registry.sh.",
            &["scripts/rotate-registry.sh", "rotate-registry.sh", "rotat"],
        );
        has(r"C:\work\app\main.rs", &["main.rs"]);
    }

    #[test]
    fn error_codes_and_versions_stay_one_term() {
        has(
            "error[E0382]: borrow of moved value",
            &["e0382", "borrow", "move"],
        );
        has(
            "connect ECONNREFUSED 127.0.0.1:5432",
            &["econnrefused", "127.0.0.1:5432"],
        );
        has("upgraded to v1.2.3 and 2.0.0-rc.1", &["v1.2.3", "2.0.0-rc.1"]);
        let t = terms("E0382");
        assert_eq!(t, ["e0382"], "a code is not stemmed nor split");
    }

    #[test]
    fn words_are_stemmed_and_stop_words_dropped() {
        assert_eq!(
            terms("Why did the deploy pipeline fail?"),
            ["deploy", "pipelin", "fail"]
        );
        assert_eq!(terms("failed failing fails"), ["fail", "fail", "fail"]);
        assert!(terms("the and of").is_empty());
        assert!(terms("!!! ... --- ///").is_empty());
    }

    #[test]
    fn sentence_punctuation_is_not_part_of_a_term() {
        assert_eq!(terms("expired."), ["expir"]);
        assert_eq!(terms("(deploy)"), ["deploy"]);
        assert_eq!(query_terms("deploy deploy Deploy"), ["deploy"]);
    }

    #[test]
    fn overlong_terms_are_dropped_and_nothing_panics_on_odd_text() {
        let blob = "a".repeat(200);
        assert!(terms(&blob).is_empty());
        for odd in [
            "ÉCOLE_été",
            "日本語のテキスト",
            "🦀rust🦀",
            "a\u{0}b",
            "x.y.z.",
            "---a---",
        ] {
            let _ = terms(odd);
        }
    }
}
