//! Query-biased excerpts for memory given back on a prompt: a memory's
//! facts that hold the prompt's terms come first, and a fact too long for
//! its room shows the sentences that hold them rather than its opening.
//! The fact a question asks for is often one sentence deep in an agent's
//! final message or a list of settings; cutting from the start hid it.

use std::collections::HashSet;

use super::gather::ObservationItem;

/// The prompt's terms, as the retrieval engine's tokeniser makes them
/// (lower-case, stemmed, code-aware, stop words left out).
pub struct Focus {
    terms: HashSet<String>,
}

impl Focus {
    pub fn of(prompt: &str) -> Self {
        Self {
            terms: cairn_retrieval::tokenize::terms(prompt).into_iter().collect(),
        }
    }

    /// Distinct terms of the focus that `text` holds.
    pub fn score(&self, text: &str) -> usize {
        let mut held: Vec<String> = cairn_retrieval::tokenize::terms(text)
            .into_iter()
            .filter(|t| self.terms.contains(t))
            .collect();
        held.sort_unstable();
        held.dedup();
        held.len()
    }

    /// The item with its facts reordered (most terms first, stable) and
    /// each fact and the narrative cut to `fact_chars` around the terms.
    pub fn apply(&self, item: &ObservationItem, fact_chars: usize) -> ObservationItem {
        let mut facts: Vec<(usize, String)> = item
            .facts
            .iter()
            .map(|f| (self.score(f), self.excerpt(f, fact_chars)))
            .collect();
        facts.sort_by_key(|f| std::cmp::Reverse(f.0));
        ObservationItem {
            facts: facts.into_iter().map(|(_, f)| f).collect(),
            narrative: self.excerpt(&item.narrative, fact_chars),
            ..item.clone()
        }
    }

    /// `text` when it fits in `max` characters; otherwise its sentences
    /// that hold the most terms (ties: earlier first), shown in their own
    /// order within `max`, with ` … ` where sentences were left out.
    pub fn excerpt(&self, text: &str, max: usize) -> String {
        let text = text.trim();
        if text.chars().count() <= max {
            return text.to_string();
        }
        let sentences = sentences(text);
        let mut ranked: Vec<(usize, usize)> = sentences
            .iter()
            .enumerate()
            .map(|(at, s)| (self.score(s), at))
            .collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut chosen = Vec::new();
        let mut used = 0;
        for (_, at) in ranked {
            let len = sentences[at].chars().count() + 3;
            if used + len > max {
                continue;
            }
            used += len;
            chosen.push(at);
        }
        if chosen.is_empty() {
            return sentences[0]
                .chars()
                .take(max.saturating_sub(1))
                .collect::<String>()
                + "…";
        }
        chosen.sort_unstable();
        let mut out = String::new();
        let mut next = 0;
        for at in chosen {
            // An ellipsis only where sentences were left out.
            out.push_str(match (out.is_empty(), at > next) {
                (true, false) => "",
                (true, true) => "… ",
                (false, false) => " ",
                (false, true) => " … ",
            });
            out.push_str(sentences[at]);
            next = at + 1;
        }
        if next < sentences.len() {
            out.push_str(" …");
        }
        out
    }
}

/// Sentences and list items of `text`: split after `. `, `; `, `! `, `? `
/// and at line ends, trimmed, empty ones left out.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end = match b {
            b'\n' => Some(i),
            b'.' | b';' | b'!' | b'?' if bytes.get(i + 1).is_some_and(|n| n.is_ascii_whitespace()) => {
                Some(i + 1)
            }
            _ => None,
        };
        if let Some(end) = end {
            out.push(&text[start..end]);
            start = end;
        }
    }
    out.push(&text[start..]);
    out.into_iter().map(str::trim).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FINAL: &str = "The refunds migration referenced a table created by a later migration, so a fresh database failed. \
        I renamed the payment intents migration to 20240215 so it runs before the refunds one. \
        Existing databases are unaffected because sqlx tracks by version.";

    #[test]
    fn a_long_text_shows_the_sentences_the_prompt_asks_about() {
        let focus = Focus::of("Why are existing databases unaffected by the rename?");
        let out = focus.excerpt(FINAL, 120);
        assert!(out.contains("sqlx tracks by version"), "{out}");
        assert!(out.starts_with("… "), "it says the opening was left out: {out}");
        assert!(out.chars().count() <= 125, "{out}");
        // A text that fits is left as it is.
        assert_eq!(focus.excerpt("short fact", 120), "short fact");
        // No term held: the opening, cut.
        let none = Focus::of("haiku autumn leaves").excerpt(FINAL, 60);
        assert!(
            none.starts_with("The refunds migration") && none.ends_with('…'),
            "{none}"
        );
    }

    #[test]
    fn facts_holding_the_prompts_terms_come_first() {
        let focus = Focus::of("what is the retry backoff of the gateway?");
        assert_eq!(focus.score("config/gateway.toml: backoff_base_ms = 350"), 2);
        assert_eq!(focus.score("Ran `cargo test`"), 0);
        assert_eq!(sentences("a. b; c\nd? e"), vec!["a.", "b;", "c", "d?", "e"]);
        assert_eq!(
            sentences("v1.2 is out"),
            vec!["v1.2 is out"],
            "a dot inside a word does not end a sentence"
        );
    }
}
