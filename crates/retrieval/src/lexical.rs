//! The lexical arm: a BM25F inverted index over one project's memories.
//!
//! Each memory's fields are tokenised (`tokenize`) and folded into one
//! weighted term frequency per term (`Σ weight(field) × tf(field)`) and one
//! weighted length (`Σ weight(field) × len(field)`), the "simple BM25F" of
//! Robertson, Zaragoza and Taylor (2004): a title word counts three times a
//! narrative word, and long memories do not win by length. Statistics
//! (documents, average length, document frequency) are the project's own,
//! so one tenant's words never move another's ranking.
//!
//! Every posting of every query term is scored: there is no window of
//! newest matches, so a rare word in a year-old memory outranks common
//! words in new ones. A posting is 8 bytes.

use std::collections::HashMap;

use crate::{
    doc::{FIELD_WEIGHTS, Fields},
    knob::f32_env,
    tokenize,
};

/// BM25's term-frequency saturation.
pub const K1: f32 = 1.2;
/// BM25's length normalisation.
pub const B: f32 = 0.75;

/// `(k1, b)`: [`K1`] and [`B`], or `CAIRN_RETRIEVAL_BM25_K1` and
/// `CAIRN_RETRIEVAL_BM25_B` when set (k1 in 0..=10, b in 0..=1): the knobs
/// the tune set is swept with, as `fuse::lexical_weight`.
pub fn bm25_params() -> (f32, f32) {
    static PARAMS: std::sync::LazyLock<(f32, f32)> = std::sync::LazyLock::new(|| {
        (
            f32_env("CAIRN_RETRIEVAL_BM25_K1", K1, 0.0..=10.0),
            f32_env("CAIRN_RETRIEVAL_BM25_B", B, 0.0..=1.0),
        )
    });
    *PARAMS
}

#[derive(Clone, Copy, Debug)]
struct Posting {
    slot: u32,
    /// Weighted term frequency.
    wtf: f32,
}

#[derive(Default)]
pub struct Lexical {
    terms: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    /// Weighted length by slot (0 for a removed slot).
    lengths: Vec<f32>,
    total_length: f64,
    /// Live memories (for the average length).
    docs: u32,
    /// Memories added since the index was built, live or removed: the
    /// population the postings count (a removed memory's stay until a
    /// rebuild), so each term's document frequency is at most this.
    added: u32,
}

/// A slot `score` asked about and did not admit (no real count reaches it).
const REFUSED: u16 = u16::MAX;

/// One slot's BM25F sum during `score`: 8 bytes, as many as a plain
/// (sum, count) pair, so the stamp (see `scratch`) costs no cache line.
#[derive(Clone, Copy, Default)]
struct Sum {
    score: f32,
    matched: u16,
    /// The search that wrote it, mod 2¹⁶.
    stamp: u16,
}

/// `score`'s sums by slot, reused by every search of a thread (`scratch`
/// says why; its `Stamped` would take 12 bytes a slot).
#[derive(Default)]
struct Sums {
    stamp: u16,
    at: Vec<Sum>,
}

impl Sums {
    fn begin(&mut self, slots: usize) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.at.iter_mut().for_each(|s| s.stamp = 0);
            self.stamp = 1;
        }
        if self.at.len() < slots {
            self.at.resize(slots, Sum::default());
        }
    }

    /// `slot`'s sum, emptied first where an older search wrote it; and
    /// whether it was.
    fn entry(&mut self, slot: u32) -> (&mut Sum, bool) {
        let stamp = self.stamp;
        let sum = &mut self.at[slot as usize];
        let fresh = sum.stamp != stamp;
        if fresh {
            *sum = Sum {
                stamp,
                ..Sum::default()
            };
        }
        (sum, fresh)
    }
}

thread_local! {
    static SUMS: std::cell::RefCell<Sums> = std::cell::RefCell::new(Sums::default());
}

impl Lexical {
    /// Indexes `text` as `slot` (slots are given in increasing order).
    pub fn add(&mut self, slot: u32, text: &Fields<String>) {
        let mut tf: HashMap<String, f32> = HashMap::new();
        let mut length = 0.0f32;
        let w = FIELD_WEIGHTS;
        for (field, weight) in [
            (&text.title, w.title),
            (&text.facts, w.facts),
            (&text.files, w.files),
            (&text.body, w.body),
        ] {
            for term in tokenize::terms(field) {
                *tf.entry(term).or_default() += weight;
                length += weight;
            }
        }
        for (term, wtf) in tf {
            let id = match self.terms.get(term.as_str()) {
                Some(id) => *id,
                None => {
                    let id = self.postings.len() as u32;
                    self.terms.insert(term.into_boxed_str(), id);
                    self.postings.push(Vec::new());
                    id
                }
            };
            self.postings[id as usize].push(Posting { slot, wtf });
        }
        if self.lengths.len() <= slot as usize {
            self.lengths.resize(slot as usize + 1, 0.0);
        }
        self.lengths[slot as usize] = length;
        self.total_length += length as f64;
        self.docs += 1;
        self.added += 1;
    }

    /// Takes `slot` out of the statistics; its postings stay until the
    /// project is rebuilt, and the caller never admits the slot again.
    pub fn remove(&mut self, slot: u32) {
        if let Some(length) = self.lengths.get_mut(slot as usize) {
            self.total_length -= *length as f64;
            *length = 0.0;
            self.docs = self.docs.saturating_sub(1);
        }
    }

    /// BM25F scores of the slots matching any of `terms` that `admit`
    /// accepts, with how many of the terms each matched, unordered.
    /// `terms` are query terms (distinct).
    pub fn score(&self, terms: &[String], admit: impl Fn(u32) -> bool) -> Vec<(u32, f32, u16)> {
        let n = self.population();
        let average = (self.total_length / self.docs.max(1) as f64).max(1.0) as f32;
        let (k1, b) = bm25_params();
        SUMS.with_borrow_mut(|sums| {
            // Dense by slot (a frequent term's postings are summed without
            // hashing); a slot not admitted is marked `REFUSED`, so each
            // slot is asked once whatever the terms.
            sums.begin(self.lengths.len());
            let postings: usize = terms
                .iter()
                .filter_map(|t| self.terms.get(t.as_str()))
                .map(|id| self.postings[*id as usize].len())
                .sum();
            let mut touched = Vec::with_capacity(postings.min(self.lengths.len()));
            for term in terms {
                let Some(&id) = self.terms.get(term.as_str()) else {
                    continue;
                };
                let postings = &self.postings[id as usize];
                let df = postings.len() as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0);
                for p in postings {
                    let (sum, fresh) = sums.entry(p.slot);
                    let length = self.lengths[p.slot as usize];
                    if fresh {
                        if length == 0.0 || !admit(p.slot) {
                            sum.matched = REFUSED;
                            continue;
                        }
                        touched.push(p.slot);
                    } else if sum.matched == REFUSED {
                        continue;
                    }
                    let norm = k1 * (1.0 - b + b * length / average);
                    // A match scores above 0 whatever the idf's rounding:
                    // it is still a hit.
                    sum.score += idf * p.wtf * (k1 + 1.0) / (p.wtf + norm) + f32::MIN_POSITIVE;
                    sum.matched += 1;
                }
            }
            touched
                .into_iter()
                .map(|slot| {
                    let sum = sums.at[slot as usize];
                    (slot, sum.score, sum.matched)
                })
                .collect()
        })
    }

    /// The `N` of idf: memories added, removed ones included, as the
    /// document frequencies count them (Lucene counts deleted documents in
    /// both until a merge, for the same reason). Counting only live ones
    /// made an edited memory's words as common as words in every memory:
    /// after two edits a word of one memory had more postings than the
    /// project had live memories, and an idf of 0.
    fn population(&self) -> f32 {
        self.added.max(1) as f32
    }

    /// The most a memory could score for `terms` (each term's idf × (k1 + 1),
    /// its saturation limit; a term no memory holds at its highest idf):
    /// what fusion divides BM25F by, so that a memory matching only the
    /// query's common words scores low however it ranks.
    pub fn max_score(&self, terms: &[String]) -> f32 {
        let n = self.population();
        let (k1, _) = bm25_params();
        terms
            .iter()
            .map(|t| {
                let df = self
                    .terms
                    .get(t.as_str())
                    .map_or(0.0, |id| self.postings[*id as usize].len() as f32);
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0) * (k1 + 1.0)
            })
            .sum()
    }

    /// The slots holding any of `terms` (an exclusion).
    pub fn matching(&self, terms: &[String]) -> std::collections::HashSet<u32> {
        terms
            .iter()
            .filter_map(|t| self.terms.get(t.as_str()))
            .flat_map(|id| self.postings[*id as usize].iter().map(|p| p.slot))
            .collect()
    }

    /// Bytes held (postings, lengths, the term dictionary), roughly.
    pub fn bytes(&self) -> usize {
        let postings: usize = self.postings.iter().map(|p| p.capacity() * 8 + 24).sum();
        let dictionary: usize = self.terms.keys().map(|k| k.len() + 16 + 8).sum();
        postings + dictionary + self.lengths.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Fields<String> {
        Fields {
            body: text.into(),
            ..Default::default()
        }
    }

    fn best(index: &Lexical, query: &str) -> Vec<u32> {
        let mut s = index.score(&tokenize::query_terms(query), |_| true);
        s.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        s.into_iter().map(|(slot, _, _)| slot).collect()
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one() {
        let mut index = Lexical::default();
        index.add(0, &body("deploy failed: the registry-creds secret had expired"));
        for slot in 1..2500 {
            index.add(slot, &body("routine deploy of the pipeline, deploy went fine"));
        }
        assert_eq!(best(&index, "deploy registry-creds")[0], 0);
        assert_eq!(best(&index, "deploy expired")[0], 0);
        // Every match is scored, however many there are.
        assert_eq!(best(&index, "deploy").len(), 2500);
    }

    #[test]
    fn words_no_memory_holds_count_in_the_maximum() {
        // A question whose rare words match nothing and whose one common
        // word matches everything is a weak lexical match, not a perfect one:
        // fusion divides by this maximum, and leaving the unknown words out
        // made such a memory score 1.0 and outrank the semantic arm's answer.
        let mut index = Lexical::default();
        for slot in 0..20 {
            index.add(slot, &body("the settings file was read"));
        }
        let normalised = |query: &str| {
            let terms = tokenize::query_terms(query);
            index.score(&terms, |_| true)[0].1 / index.max_score(&terms)
        };
        let (alone, mixed) = (normalised("file"), normalised("tolerate broken file"));
        assert!(mixed < 0.1 * alone, "{mixed} vs {alone}");
    }

    #[test]
    fn a_title_word_outweighs_a_narrative_word() {
        let mut index = Lexical::default();
        index.add(
            0,
            &Fields {
                body: "we looked at the scheduler for a while".into(),
                title: "Queue tuning".into(),
                ..Default::default()
            },
        );
        index.add(
            1,
            &Fields {
                title: "Scheduler rewrite".into(),
                body: "we looked at the queue for a while".into(),
                ..Default::default()
            },
        );
        assert_eq!(best(&index, "scheduler"), [1, 0]);
    }

    #[test]
    fn removed_slots_are_not_scored_and_leave_the_statistics() {
        let mut index = Lexical::default();
        index.add(0, &body("cache eviction"));
        index.add(1, &body("cache warmup"));
        index.remove(0);
        assert_eq!(best(&index, "cache eviction"), [1]);
        assert_eq!(index.docs, 1);
        assert_eq!(
            index.matching(&["evict".into()]).into_iter().collect::<Vec<_>>(),
            [0]
        );
    }

    #[test]
    fn the_admit_filter_is_applied() {
        let mut index = Lexical::default();
        index.add(0, &body("cache"));
        index.add(1, &body("cache"));
        let s = index.score(&["cach".into(), "warm".into()], |slot| slot == 1);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].0, s[0].2), (1, 1), "one of the two terms matched");
    }

    #[test]
    fn each_search_starts_from_nothing_whatever_the_last_one_did() {
        let mut index = Lexical::default();
        index.add(0, &body("cache warm"));
        index.add(1, &body("cache"));
        index.add(2, &body("warm warm"));
        let terms: Vec<String> = ["cach".into(), "warm".into()].into();
        let mut first = index.score(&terms, |_| true);
        first.sort_by_key(|(slot, _, _)| *slot);
        // A search that refused slot 0, then one that did not: no sum or
        // refusal of an older search survives.
        assert_eq!(index.score(&terms, |slot| slot != 0).len(), 2);
        let mut again = index.score(&terms, |_| true);
        again.sort_by_key(|(slot, _, _)| *slot);
        assert_eq!(again, first);
        assert_eq!(first.iter().map(|(_, _, m)| *m).collect::<Vec<_>>(), [2, 1, 1]);
    }

    #[test]
    fn the_sums_stamp_wraps_without_reviving_an_old_sum() {
        let mut sums = Sums::default();
        sums.begin(4);
        sums.entry(1).0.score = 5.0;
        // The sum above carries stamp 1; run the stamp round to 1 again.
        sums.stamp = u16::MAX;
        for _ in 0..3 {
            sums.begin(4);
            assert_ne!(sums.at[1].stamp, sums.stamp, "an old sum would count");
        }
        let (sum, fresh) = sums.entry(1);
        assert!(fresh && sum.score == 0.0);
    }

    #[test]
    fn an_edited_memorys_words_keep_their_idf() {
        let mut index = Lexical::default();
        // Edited: the old text's postings stay (dead) until a rebuild, so
        // `blue` has two postings and one live memory holds it.
        index.add(0, &body("deploys use the blue cluster"));
        index.remove(0);
        index.add(1, &body("deploys use the blue cluster, green now"));
        let s = index.score(&["blue".into()], |_| true);
        assert_eq!(s.len(), 1);
        // Counted against live memories only, the idf was 0 and the match
        // scored next to nothing; counted against what the postings count
        // (the removed memory too), the word keeps a weight, if a smaller
        // one than a word never edited.
        assert!(s[0].1 > 0.1, "an edited memory's word keeps its weight: {s:?}");
    }
}
