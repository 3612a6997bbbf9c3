//! Query-biased excerpts for memory given back on a prompt: a memory's
//! facts that hold the prompt's terms come first, and a fact too long for
//! its room shows the sentences that hold them rather than its opening.
//! The fact a question asks for is often one sentence deep in an agent's
//! final message or a list of settings; cutting from the start hid it.

use std::collections::HashSet;

use super::{gather::ObservationItem, markdown::FACT_CHARS};

/// The fewest characters worth giving a fact or a narrative: less shows
/// a few words cut from their sentence.
pub const MIN_PIECE: usize = 40;

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
    /// cut to share `room` characters with the narrative: each fact in
    /// that order gets what the ones before it left, at most a fact line's
    /// length, and the narrative what the facts left. Each is then cut at
    /// its sentences by [`Self::excerpt`], not mid-word by the block's or
    /// the line's length; one left less than [`MIN_PIECE`] is not shown.
    pub fn apply(&self, item: &ObservationItem, room: usize) -> ObservationItem {
        let mut ranked: Vec<(usize, &String)> = item.facts.iter().map(|f| (self.score(f), f)).collect();
        ranked.sort_by_key(|f| std::cmp::Reverse(f.0));
        let mut left = room;
        let mut facts = Vec::new();
        for (_, fact) in ranked {
            // The excerpt may run a character past its room (its ellipses).
            let piece = left.min(FACT_CHARS - 2);
            if piece < MIN_PIECE {
                break;
            }
            let shown = self.excerpt(fact, piece);
            left = left.saturating_sub(shown.chars().count() + 3);
            facts.push(shown);
        }
        let narrative = match left >= MIN_PIECE {
            true => self.excerpt(&item.narrative, left),
            false => String::new(),
        };
        ObservationItem {
            facts,
            narrative,
            ..item.clone()
        }
    }

    /// `text` when it fits in `max` characters; otherwise its sentences
    /// that hold the most terms (ties: the nearest to a sentence holding a
    /// term, the next before the previous, then the earlier), shown in their own
    /// order within `max`, with ` … ` where sentences were left out.
    pub fn excerpt(&self, text: &str, max: usize) -> String {
        let text = text.trim();
        if text.chars().count() <= max {
            return text.to_string();
        }
        let sentences = sentences(text);
        let scores: Vec<usize> = sentences.iter().map(|s| self.score(s)).collect();
        let held: Vec<usize> = (0..scores.len()).filter(|at| scores[*at] > 0).collect();
        // Among equals, the nearest to a sentence holding a term first, the
        // one after it before the one before it: a sentence's neighbours
        // (the next setting of a list, the sentence that goes on) are more
        // often what was asked about than the text's opening.
        let distance = |at: usize| {
            held.iter()
                .map(|&h| if at > h { 2 * (at - h) - 1 } else { 2 * (h - at) })
                .min()
                .unwrap_or(usize::MAX)
        };
        let mut ranked: Vec<(usize, usize)> = scores.iter().copied().zip(0..).collect();
        ranked.sort_by_key(|(score, at)| (std::cmp::Reverse(*score), distance(*at), *at));
        let ranked_first = ranked.first().copied();
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
            // No sentence fits: the one holding the most terms (the first of
            // equals), cut after its last whole word that fits.
            let best = ranked_first.map_or(0, |(_, at)| at);
            let opening = if best > 0 { "… " } else { "" };
            let room = max.saturating_sub(1 + opening.chars().count());
            let cut: String = sentences[best].chars().take(room).collect();
            let words = match cut.rfind(char::is_whitespace) {
                Some(at) if at > 0 => cut[..at].trim_end(),
                _ => cut.as_str(),
            };
            return format!("{opening}{words}…");
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

    fn item(facts: Vec<String>, narrative: &str) -> ObservationItem {
        ObservationItem {
            id: uuid::Uuid::nil(),
            kind: "turn summary".into(),
            title: "Requests to the shipping service time out under load".into(),
            subtitle: String::new(),
            facts,
            narrative: narrative.into(),
            files_read: vec![],
            files_modified: vec![],
            created_at: chrono::Utc::now(),
            state: crate::memory::lifecycle::MemoryState::Live,
            root: None,
        }
    }

    /// A turn's notes on what it read: thirty settings of one file in one
    /// fact, the asked one among them.
    fn settings_read() -> String {
        let mut settings: Vec<String> = (0..30)
            .map(|i| format!("config/shipping.toml: request_{i} = {}", 100 + i))
            .collect();
        settings.insert(21, "config/shipping.toml: max_connections = 42".into());
        format!("learned: Noted in what was read and run: {}", settings.join("; "))
    }

    #[test]
    fn a_long_list_of_settings_shows_the_asked_one_whole_within_its_line() {
        let focus = Focus::of("What is max_connections for shipping?");
        let shown = focus.apply(&item(vec![settings_read()], ""), 900);
        let fact = &shown.facts[0];
        assert!(fact.contains("max_connections = 42;"), "{fact}");
        assert!(fact.chars().count() <= FACT_CHARS, "{fact}");
        // The line is shown as the excerpt made it: cut between settings,
        // never inside one.
        let block = super::super::markdown::detail(&shown, 2000);
        let line = block.lines().find(|l| l.contains("max_connections")).unwrap();
        assert_eq!(line, format!("- {fact}"));
        assert!(line.ends_with(" …") || line.ends_with(';'), "{line}");
    }

    #[test]
    fn facts_and_the_narrative_share_the_room_and_the_block_is_not_cut() {
        let focus = Focus::of("What is max_connections for shipping?");
        let sentence = |i: usize| format!("Step {i} of the load test ran for a while and then finished.");
        let long = |from: usize| (from..from + 6).map(sentence).collect::<Vec<_>>().join(" ");
        let original = item(vec![long(0), settings_read(), long(10)], &long(20));
        let room = 420;
        let shown = focus.apply(&original, room);
        assert!(
            shown.facts[0].contains("max_connections = 42"),
            "the fact with the terms first: {shown:?}"
        );
        let used: usize = shown
            .facts
            .iter()
            .chain([&shown.narrative].into_iter().filter(|n| !n.is_empty()))
            .map(|t| t.chars().count() + 3)
            .sum();
        assert!(
            used <= room + 1,
            "{used} characters for a room of {room}: {shown:?}"
        );
        assert!(
            shown.facts.len() < 3 || shown.narrative.is_empty(),
            "something gave way: {shown:?}"
        );
        // The block's own cut (which can fall mid-word) is not needed:
        // a third of the share is the heading's, as `prompt::render` gives.
        let block = super::super::markdown::detail(&shown, room * 3 / 2);
        assert!(!block.ends_with("…\n") || block.ends_with(" …\n"), "{block}");
        assert_eq!(block, super::super::markdown::detail(&shown, usize::MAX));
    }

    #[test]
    fn a_sentence_too_long_for_its_room_is_the_one_with_the_terms_cut_at_a_word() {
        let text = "The opening sentence says nothing much at all about anything here. \
                    The pool of the accounts database holds max_connections twelve, set in config/accounts.toml by the platform team";
        let out = Focus::of("accounts pool max_connections").excerpt(text, 60);
        assert!(out.starts_with("… The pool of the accounts"), "{out}");
        assert!(out.ends_with('…') && out.chars().count() <= 60, "{out}");
        let cut_word = out.trim_end_matches('…').rsplit(' ').next().unwrap();
        assert!(
            text.contains(&format!(" {cut_word} ")),
            "ends at a whole word: {out}"
        );
    }

    #[test]
    fn a_settings_neighbours_come_before_the_lists_opening() {
        let list = "config/gateway.toml: timeout_ms = 900; config/gateway.toml: pool = 8; \
                    config/gateway.toml: region = eu-west-1; config/gateway.toml: max_attempts = 7; \
                    config/gateway.toml: backoff_base_ms = 250; config/gateway.toml: jitter = full";
        let out = Focus::of("How many attempts, and what delay between them?").excerpt(list, 110);
        assert!(out.contains("max_attempts = 7;"), "{out}");
        assert!(
            out.contains("backoff_base_ms = 250;"),
            "the held setting's neighbour: {out}"
        );
        assert!(!out.contains("timeout_ms"), "{out}");
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
