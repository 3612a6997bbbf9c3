//! Which secret rules match anywhere in a text: one forward lazy DFA over
//! every rule's pattern, with no capture groups and no reverse automaton.
//! That is about a third less to compile than a `RegexSet` of the same
//! patterns (14 M instructions instead of 21 M, counted by callgrind), which
//! a process that lives for one event (`cairn-hook`) pays on every call. A
//! full DFA built ahead of time is out of reach: determinising even five of
//! the rules passes 512 MB. Should the lazy DFA ever give up, the
//! `RegexSet` is built and answers instead.

use std::sync::{Mutex, OnceLock};

use regex::{RegexSet, RegexSetBuilder};
use regex_automata::{
    Input, MatchKind, PatternSet,
    hybrid::dfa::{Cache, DFA},
    nfa::thompson::{self, WhichCaptures},
};

pub(super) struct RuleSet {
    patterns: Vec<&'static str>,
    dfa: DFA,
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
    /// `dfa_bytes` bounds each search state's cache of DFA states.
    pub(super) fn new(patterns: Vec<&'static str>, dfa_bytes: usize) -> Self {
        let dfa = DFA::builder()
            .configure(DFA::config().match_kind(MatchKind::All).cache_capacity(dfa_bytes))
            .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
            .build_many(&patterns)
            .expect("secret rule table must compile as a lazy DFA");
        Self {
            patterns,
            dfa,
            caches: Mutex::new(Vec::new()),
            fallback: OnceLock::new(),
            dfa_bytes,
        }
    }

    /// The indexes of the rules that match somewhere in `text`.
    pub(super) fn matches(&self, text: &str) -> PatternSet {
        let mut hits = PatternSet::new(self.patterns.len());
        let mut cache = self
            .caches
            .lock()
            .ok()
            .and_then(|mut caches| caches.pop())
            .unwrap_or_else(|| self.dfa.create_cache());
        let searched = self
            .dfa
            .try_which_overlapping_matches(&mut cache, &Input::new(text), &mut hits);
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
    /// that hit each rule and on texts that hit none.
    #[test]
    fn says_what_a_regex_set_says() {
        let set = RuleSet::new(RULES.iter().map(|r| r.pattern).collect(), 8 << 20);
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
        }
    }
}
