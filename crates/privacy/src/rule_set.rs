//! Which secret rules match anywhere in a text, in two steps.
//!
//! First the gates: one Aho-Corasick scan for every rule's keywords (ASCII
//! case ignored, `Rule::keywords`) names the rules the text could match;
//! most text (build output, code without credentials) names none and costs
//! that one scan. Then the candidates are checked: by one forward lazy DFA
//! over every rule's pattern, with no capture groups and no reverse
//! automaton, once it is built (a server builds it at start, `warm`); until
//! then by each candidate's own regex, so a process that lives for one event
//! (`cairn-hook`) compiles only the rules its text could match, not the
//! whole table (12 M instructions, counted by callgrind). A full DFA built
//! ahead of time is out of reach: determinising even five of the rules
//! passes 512 MB. Should the lazy DFA ever give up, a `RegexSet` is built
//! and answers instead.

use std::sync::{Mutex, OnceLock};

use aho_corasick::AhoCorasick;
use regex::{RegexSet, RegexSetBuilder};
use regex_automata::{
    Input, MatchKind, PatternSet,
    hybrid::dfa::{Cache, DFA},
    nfa::thompson::{self, WhichCaptures},
};

/// The two letters outside ASCII that a case-insensitive pattern matches in
/// place of an ASCII one (`ſ` for `s`, the Kelvin sign for `k`): a text
/// holding one opens every gate, as the keywords are matched by ASCII case.
pub(super) const FOLDS_TO_ASCII: [&str; 2] = ["\u{17F}", "\u{212A}"];

pub(super) struct RuleSet {
    patterns: Vec<&'static str>,
    /// Every keyword once; `gated[k]` are the rules keyword `k` opens.
    gate: AhoCorasick,
    gated: Vec<Vec<usize>>,
    /// Rules with no keywords: always candidates.
    ungated: Vec<usize>,
    dfa: OnceLock<DFA>,
    /// Search state, one per concurrent search (a server filters on many threads).
    caches: Mutex<Vec<Cache>>,
    fallback: OnceLock<RegexSet>,
    dfa_bytes: usize,
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSet")
            .field("patterns", &self.patterns.len())
            .finish()
    }
}

impl RuleSet {
    /// `rules` are each rule's pattern and keywords; `dfa_bytes` bounds each
    /// search state's cache of DFA states.
    pub(super) fn new(rules: Vec<(&'static str, &'static [&'static str])>, dfa_bytes: usize) -> Self {
        let mut keywords: Vec<String> = Vec::new();
        let mut gated: Vec<Vec<usize>> = Vec::new();
        let mut ungated = Vec::new();
        for (rule, (_, words)) in rules.iter().enumerate() {
            if words.is_empty() {
                ungated.push(rule);
            }
            for word in words.iter() {
                let word = word.to_ascii_lowercase();
                match keywords.iter().position(|k| *k == word) {
                    Some(k) => gated[k].push(rule),
                    None => {
                        keywords.push(word);
                        gated.push(vec![rule]);
                    }
                }
            }
        }
        for letter in FOLDS_TO_ASCII {
            keywords.push(letter.into());
            gated.push((0..rules.len()).collect());
        }
        // The NFA builds in a quarter of the DFA's instructions, and scans
        // a few kilobytes about as fast.
        let gate = AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
            .ascii_case_insensitive(true)
            .build(&keywords)
            .expect("secret rule keywords must build an automaton");
        Self {
            patterns: rules.into_iter().map(|(pattern, _)| pattern).collect(),
            gate,
            gated,
            ungated,
            dfa: OnceLock::new(),
            caches: Mutex::new(Vec::new()),
            fallback: OnceLock::new(),
            dfa_bytes,
        }
    }

    /// The rules `text` could match (their gates found a keyword), in table order.
    pub(super) fn candidates(&self, text: &str) -> Vec<usize> {
        let mut open = vec![false; self.patterns.len()];
        for rule in &self.ungated {
            open[*rule] = true;
        }
        for found in self.gate.find_overlapping_iter(text) {
            for rule in &self.gated[found.pattern().as_usize()] {
                open[*rule] = true;
            }
        }
        open.iter()
            .enumerate()
            .filter_map(|(rule, open)| open.then_some(rule))
            .collect()
    }

    /// Builds the DFA of every rule now, so that `matches` answers by it.
    pub(super) fn warm(&self) {
        self.dfa();
    }

    /// Whether the DFA of every rule is built.
    pub(super) fn is_warm(&self) -> bool {
        self.dfa.get().is_some()
    }

    fn dfa(&self) -> &DFA {
        self.dfa.get_or_init(|| {
            DFA::builder()
                .configure(
                    DFA::config()
                        .match_kind(MatchKind::All)
                        .cache_capacity(self.dfa_bytes),
                )
                .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
                .build_many(&self.patterns)
                .expect("secret rule table must compile as a lazy DFA")
        })
    }

    /// The indexes of the rules that match somewhere in `text`, by the DFA
    /// of every rule (built on first use).
    pub(super) fn matches(&self, text: &str) -> PatternSet {
        let mut hits = PatternSet::new(self.patterns.len());
        let dfa = self.dfa();
        let mut cache = self
            .caches
            .lock()
            .ok()
            .and_then(|mut caches| caches.pop())
            .unwrap_or_else(|| dfa.create_cache());
        let searched = dfa.try_which_overlapping_matches(&mut cache, &Input::new(text), &mut hits);
        if let Ok(mut caches) = self.caches.lock() {
            caches.push(cache);
        }
        if searched.is_err() {
            hits.clear();
            for index in self.fallback().matches(text).iter() {
                let _ = hits.try_insert(regex_automata::PatternID::must(index));
            }
        }
        hits
    }

    fn fallback(&self) -> &RegexSet {
        self.fallback.get_or_init(|| {
            RegexSetBuilder::new(&self.patterns)
                .dfa_size_limit(self.dfa_bytes)
                .build()
                .expect("secret rule table must compile as a set")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::RULES;

    /// The lazy DFA and the `RegexSet` agree on which rules match, on texts
    /// that hit each rule and on texts that hit none, and the gates let
    /// every matching rule through.
    #[test]
    fn says_what_a_regex_set_says() {
        let set = RuleSet::new(RULES.iter().map(|r| (r.pattern, r.keywords)).collect(), 8 << 20);
        let texts = [
            "nothing to see here, just cargo test output\nok ok ok",
            "export GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
            "curl -u admin:hunter22 https://example.com",
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
            "postgres://app:s3cretpass@db:5432/app and AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1y2z3\n-----END RSA PRIVATE KEY-----",
            "{\"private_key_id\": \"0123456789abcdef0123456789abcdef01234567\"}",
            "éèà unicode text with sk-ant-abcdefghijklmnopqrstuvwxyz and ünïcödé",
        ];
        let reference = set.fallback();
        for text in texts {
            let ours: Vec<usize> = set.matches(text).iter().map(|p| p.as_usize()).collect();
            let theirs: Vec<usize> = reference.matches(text).iter().collect();
            assert_eq!(ours, theirs, "{text}");
            let candidates = set.candidates(text);
            assert!(
                theirs.iter().all(|hit| candidates.contains(hit)),
                "{text}: gates closed on a match"
            );
        }
    }
}
