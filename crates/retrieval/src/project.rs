//! One project's index: its memories' attributes by slot, the lexical and
//! semantic arms over the same slots, and the search that runs both,
//! filters them alike and fuses them.

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap},
    hash::{DefaultHasher, Hash, Hasher},
};

use uuid::Uuid;

use crate::{
    doc::{Attrs, Doc, Fields, Source},
    fuse,
    gate::{Admission, Gates},
    lexical::Lexical,
    query::{Hit, Mode, Query},
    scratch::Stamped,
    semantic::{Ordered, Semantic},
    tokenize,
};

thread_local! {
    /// Which slots the semantic pool holds, reused by every search of this thread.
    static POOLED: std::cell::RefCell<Stamped<()>> = std::cell::RefCell::new(Stamped::default());
}

struct Slot {
    id: Uuid,
    source: Source,
    attrs: Attrs,
    /// Of the indexed text: an upsert with the same text changes attributes only.
    text_hash: u64,
    alive: bool,
}

/// Vectors kept from the semantic arm's scan for fusion, at least.
pub const SEMANTIC_POOL: usize = 400;

/// A search's first hits hold this many different texts, when it has them:
/// a hit whose text repeats a better one's comes after the best hit of
/// each of them (`say_each_once`); past them, hits go by score alone. A
/// constant, not the hits wanted, so that pages of one search agree.
pub const SAY_ONCE_DEPTH: usize = 20;

/// A memory as indexed: id, source, attributes, text hash, has a vector.
pub type Entry = (Uuid, Source, Attrs, u64, bool);

#[derive(Default)]
pub struct ProjectIndex {
    slots: Vec<Slot>,
    /// By slot, what admission reads first (`gate`).
    gates: Gates,
    by_id: HashMap<Uuid, u32>,
    lexical: Lexical,
    semantic: Semantic,
    /// Slots replaced or removed (their postings linger until a rebuild).
    dead: usize,
    /// The largest feedback factor ever indexed: with the recency bonus, a
    /// bound on what the final score multiplies a fused one by.
    max_feedback: f32,
}

fn hash_text(text: &Fields<String>) -> u64 {
    let mut h = DefaultHasher::new();
    (&text.title, &text.facts, &text.files, &text.body).hash(&mut h);
    h.finish()
}

/// The `n` best-scored of `items` (any of equals at the edge), in no order,
/// kept in a heap of `n` while the rest pass by.
fn best_n(items: impl Iterator<Item = (u32, f32)>, n: usize) -> Vec<(u32, f32)> {
    let mut heap = BinaryHeap::with_capacity(n + 1);
    for (slot, score) in items {
        if heap.len() < n {
            heap.push(Reverse((Ordered(score), slot)));
        } else if let Some(mut least) = heap.peek_mut()
            && score > least.0.0.0
        {
            *least = Reverse((Ordered(score), slot));
        }
    }
    heap.into_iter().map(|Reverse((s, slot))| (slot, s.0)).collect()
}

/// How many of the best-first `texts` it takes to meet `SAY_ONCE_DEPTH`
/// different ones; `None` when they hold fewer.
fn texts_met(texts: impl Iterator<Item = u64>) -> Option<usize> {
    let mut seen = std::collections::HashSet::with_capacity(SAY_ONCE_DEPTH);
    texts
        .enumerate()
        .find(|(_, t)| seen.insert(*t) && seen.len() == SAY_ONCE_DEPTH)
        .map(|(at, _)| at + 1)
}

/// Puts the best of `items` (by `order`) first until they hold `want`
/// items and `SAY_ONCE_DEPTH` different texts, and says how many that
/// took; `None` when all of them hold fewer texts. The best `want` are
/// selected, not sorted, unless copies crowd them: then all are sorted.
/// `want` must be in `1..=items.len()`.
fn best_holding_texts<T>(
    items: &mut [T],
    want: usize,
    order: impl Fn(&T, &T) -> std::cmp::Ordering + Copy,
    text: impl Fn(&T) -> u64 + Copy,
) -> Option<usize> {
    items.select_nth_unstable_by(want - 1, order);
    if texts_met(items[..want].iter().map(text)).is_some() {
        return Some(want);
    }
    items.sort_unstable_by(order);
    texts_met(items.iter().map(text)).map(|n| n.max(want))
}

/// Reorders `hits` (best first, every hit that could rank) so that they
/// open with the best hit of each of their first `SAY_ONCE_DEPTH`
/// different texts, in order; the hits these pass over (repeats of a
/// better hit's text, word for word) follow, then the rest, by score.
/// Sixty copies of a routine note above everything else then take one of
/// the first 20 places, not all 20.
fn say_each_once(hits: &mut [(u32, f64)], text: impl Fn(u32) -> u64) {
    let depth = texts_met(hits.iter().map(|(slot, _)| text(*slot))).unwrap_or(hits.len());
    let hits = &mut hits[..depth];
    let mut seen = std::collections::HashSet::with_capacity(SAY_ONCE_DEPTH);
    let (firsts, repeats): (Vec<_>, Vec<_>) = hits.iter().partition(|(slot, _)| seen.insert(text(*slot)));
    for (to, hit) in hits.iter_mut().zip(firsts.into_iter().chain(repeats)) {
        *to = hit;
    }
}

impl ProjectIndex {
    /// Adds a memory, or updates one: attributes in place when its text is
    /// the same, otherwise a new slot.
    pub fn upsert(&mut self, doc: Doc) {
        self.max_feedback = self.max_feedback.max(doc.attrs.feedback);
        let text_hash = hash_text(&doc.text);
        if let Some(&slot) = self.by_id.get(&doc.id) {
            let s = &mut self.slots[slot as usize];
            if s.text_hash == text_hash {
                self.gates.set(slot, s.source, &doc.attrs);
                s.attrs = doc.attrs;
                return;
            }
        }
        // A new text makes the old vector stale: the writer deletes it and
        // stores a new one, which arrives through `set_vector`.
        self.remove(doc.id);
        let slot = self.slots.len() as u32;
        self.lexical.add(slot, &doc.text);
        self.gates.push(doc.source, &doc.attrs);
        self.slots.push(Slot {
            id: doc.id,
            source: doc.source,
            attrs: doc.attrs,
            text_hash,
            alive: true,
        });
        self.by_id.insert(doc.id, slot);
    }

    pub fn remove(&mut self, id: Uuid) {
        if let Some(slot) = self.by_id.remove(&id) {
            self.slots[slot as usize].alive = false;
            self.gates.close(slot);
            self.lexical.remove(slot);
            self.semantic.clear(slot);
            self.dead += 1;
        }
    }

    /// Sets a memory's vector; `false` when the memory is not indexed.
    pub fn set_vector(&mut self, id: Uuid, vector: &[f32]) -> bool {
        match self.by_id.get(&id) {
            Some(&slot) => self.semantic.set(slot, vector),
            None => false,
        }
    }

    pub fn clear_vector(&mut self, id: Uuid) {
        if let Some(&slot) = self.by_id.get(&id) {
            self.semantic.clear(slot);
        }
    }

    pub fn contains(&self, id: Uuid) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Memories indexed.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Memories with a vector.
    pub fn vectors(&self) -> usize {
        self.semantic.len()
    }

    /// Share of slots that are dead: above a quarter, a rebuild pays.
    pub fn dead_share(&self) -> f64 {
        self.dead as f64 / self.slots.len().max(1) as f64
    }

    /// Bytes held, roughly.
    pub fn bytes(&self) -> usize {
        self.slots.capacity() * (std::mem::size_of::<Slot>() + 16)
            + self.gates.bytes()
            + self.by_id.capacity() * 24
            + self.lexical.bytes()
            + self.semantic.bytes()
    }

    /// Every memory the query admits that either arm finds, best first, at
    /// most `query.want`. Every lexical match is scored, and every vector
    /// compared: the semantic arm keeps its best `SEMANTIC_POOL` (at least
    /// four times what is wanted) and the cosine of every lexical match
    /// that could still rank (see [`Self::keep_could_rank_hybrid`]), so a memory outside
    /// both can never outscore one inside (its fused score is at most the
    /// pool's lowest; only the state and recency factors, ×0.25..×1.1,
    /// could reorder at that edge).
    ///
    /// The first hits are ordered by [`say_each_once`], so at least
    /// `SAY_ONCE_DEPTH` are looked for, and the pruning keeps whatever
    /// could rank among the best hits of that many different texts.
    pub fn search(&self, asked: &Query<'_>) -> Vec<Hit> {
        let q = &Query {
            want: asked.want.max(SAY_ONCE_DEPTH),
            ..asked.clone()
        };
        let excluded = self.lexical.matching(&tokenize::query_terms(q.exclude));
        let admission = Admission::new(&self.gates, q);
        let admit = |slot: u32| {
            let admitted = admission.decide(slot).unwrap_or_else(|| {
                let s = &self.slots[slot as usize];
                s.alive && q.admits(s.source, &s.attrs) && q.filters.narrowed_to(&s.id)
            });
            admitted && !excluded.contains(&slot)
        };
        let lexical_on = matches!(q.mode, Mode::Lexical | Mode::Hybrid);
        let semantic_on = matches!(q.mode, Mode::Semantic | Mode::Hybrid) && q.vector.is_some();
        let terms = tokenize::query_terms(q.text);
        let mut matched = if lexical_on {
            self.lexical.score(&terms, admit)
        } else {
            vec![]
        };
        let weight = match (lexical_on, semantic_on) {
            (true, true) => q.lexical_weight.unwrap_or_else(fuse::lexical_weight),
            (true, false) => 1.0,
            (false, _) => 0.0,
        };
        // One arm alone keeps its own scale (BM25; cosine similarity), so a
        // vector search's scores read as similarities; fusion normalises.
        let lexical_max = (weight > 0.0 && weight < 1.0).then(|| self.lexical.max_score(&terms));
        let semantic = match (semantic_on, q.vector) {
            (true, Some(v)) => {
                let probe = self.semantic.probe(v);
                let (mut pool, size) =
                    self.semantic_pool(&probe, SEMANTIC_POOL.max(q.want.saturating_mul(4)), admit);
                let rest: Vec<u32> = POOLED.with_borrow_mut(|pooled| {
                    pooled.begin(self.slots.len());
                    pool.iter().for_each(|(slot, _)| pooled.set(*slot, ()));
                    if let Some(max) = lexical_max.filter(|m| *m > 0.0) {
                        self.keep_could_rank_hybrid(
                            q,
                            &probe,
                            &pool,
                            size,
                            pooled,
                            weight,
                            max,
                            &mut matched,
                        );
                    }
                    matched
                        .iter()
                        .map(|(slot, _, _)| *slot)
                        .filter(|slot| !pooled.contains(*slot))
                        .collect()
                });
                pool.extend(self.semantic.similarities(&probe, &rest));
                pool
            }
            _ => vec![],
        };
        if !semantic_on {
            self.keep_could_rank(q, &mut matched);
        }
        let lexical: Vec<(u32, f32)> = matched.iter().map(|(slot, s, _)| (*slot, *s)).collect();
        let fused = fuse::combine(&lexical, &semantic, weight, lexical_max, self.slots.len());
        let mut hits: Vec<(u32, f64)> = fused
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .map(|(slot, s)| (slot, s as f64 * self.factor(slot, q)))
            .collect();
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            let (x, y) = (&self.slots[a.0 as usize], &self.slots[b.0 as usize]);
            b.1.total_cmp(&a.1)
                .then(y.attrs.created_at.cmp(&x.attrs.created_at))
                .then(y.id.cmp(&x.id))
        };
        let text = |slot: u32| self.slots[slot as usize].text_hash;
        if hits.len() > q.want && q.want > 0 {
            // Past the first that hold the wanted and their different
            // texts, no hit can be shown.
            if let Some(n) = best_holding_texts(&mut hits, q.want, order, |h| text(h.0)) {
                hits.truncate(n);
            }
        }
        hits.sort_by(order);
        say_each_once(&mut hits, text);
        hits.truncate(asked.want);
        // Each arm's own score of the hits kept (for gates and reports).
        let mut raw: std::collections::HashMap<u32, (f32, f32, u16)> =
            hits.iter().map(|(s, _)| (*s, (0.0, 0.0, 0))).collect();
        for (slot, s, n) in &matched {
            if let Some(r) = raw.get_mut(slot) {
                (r.0, r.2) = (*s, *n);
            }
        }
        // Gates read the plain cosine, not the similarity ranked by.
        if let (true, Some(v)) = (semantic_on, q.vector) {
            let kept: Vec<u32> = hits.iter().map(|(slot, _)| *slot).collect();
            for (slot, cosine) in self.semantic.cosines(v, &kept) {
                if let Some(r) = raw.get_mut(&slot) {
                    r.1 = cosine;
                }
            }
        }
        hits.into_iter()
            .map(|(slot, score)| {
                let m = &self.slots[slot as usize];
                let (bm25, cosine, matched) = raw.get(&slot).copied().unwrap_or_default();
                Hit {
                    source: m.source,
                    id: m.id,
                    score,
                    created_at: m.attrs.created_at,
                    bm25,
                    cosine,
                    matched,
                    terms: terms.len() as u16,
                }
            })
            .collect()
    }

    /// The semantic arm's best `size`, widened (four times each round)
    /// until they hold `SAY_ONCE_DEPTH` different texts or every admitted
    /// vector, so that copies of one note nearest the query cannot fill the
    /// pool and keep out what only the semantic arm finds; and the size
    /// used.
    fn semantic_pool(
        &self,
        probe: &crate::semantic::Probe,
        mut size: usize,
        admit: impl Fn(u32) -> bool + Copy,
    ) -> (Vec<(u32, f32)>, usize) {
        loop {
            let pool = self.semantic.top_of(probe, size, admit);
            let texts = pool.iter().map(|(slot, _)| self.slots[*slot as usize].text_hash);
            if pool.len() < size || texts_met(texts).is_some() {
                return (pool, size);
            }
            size = size.saturating_mul(4);
        }
    }

    /// What the final score multiplies a fused score by: state, feedback
    /// and (outside semantic mode) recency. Read from the gates' dense
    /// arrays, not the slot: the pruning passes weigh every lexical match,
    /// and a slot's full attributes are a cache miss each.
    fn factor(&self, slot: u32, q: &Query<'_>) -> f64 {
        let (created_at, weight) = self.gates.factor_of(slot);
        match q.mode {
            Mode::Semantic => weight,
            _ => weight * fuse::recency(created_at, q.as_of),
        }
    }

    /// At most what [`Self::factor`] gives any memory of this index.
    fn max_factor(&self) -> f64 {
        self.max_feedback as f64 * (1.0 + fuse::RECENCY_BONUS)
    }

    /// Whether a memory whose fused score is at most `fused` can reach
    /// `floor` (lowered by a margin for f32 sums rounded in another order):
    /// the factor's bound first, which spares most memories the exact one.
    fn can_reach(&self, fused: f64, slot: u32, q: &Query<'_>, floor: f64) -> bool {
        let floor = floor * (1.0 - 1e-5);
        fused * self.max_factor() >= floor && fused * self.factor(slot, q) >= floor
    }

    /// Lexical mode: keeps the matches that could still be among the `want`
    /// best. A match's final score is its BM25F times its factor, at most
    /// times [`Self::max_factor`]; the `want` best by BM25F set a floor
    /// (their exact final scores), and a match whose bound is below it
    /// cannot rank. Exact, as [`Self::keep_could_rank_hybrid`].
    fn keep_could_rank(&self, q: &Query<'_>, matched: &mut Vec<(u32, f32, u16)>) {
        if q.want == 0 || matched.len() <= q.want {
            return;
        }
        // The floor is a score that `want` matches, holding at least
        // `SAY_ONCE_DEPTH` different texts, all reach.
        let best_first = |a: &(u32, f32, u16), b: &(u32, f32, u16)| b.1.total_cmp(&a.1);
        let text = |m: &(u32, f32, u16)| self.slots[m.0 as usize].text_hash;
        let known = best_holding_texts(matched, q.want, best_first, text).unwrap_or(matched.len());
        let floor = matched[..known]
            .iter()
            .map(|(slot, s, _)| *s as f64 * self.factor(*slot, q))
            .fold(f64::INFINITY, f64::min);
        matched.retain(|(slot, s, _)| self.can_reach(*s as f64, *slot, q, floor));
    }

    /// Hybrid mode: keeps the lexical matches in the semantic pool, and
    /// those outside it that could still be among the `want` best; the
    /// others' cosines are never computed.
    ///
    /// Exact where the semantic arm is (a project scanned by its signs
    /// first may hold a vector outside the pool above the pool's lowest; the
    /// bench measures how rarely): a match outside the pool has a cosine at most
    /// the pool's lowest (the pool is the arm's best `size`; when it is not
    /// full, every other vector is below `MIN_SIMILARITY` and counts 0), so
    /// its final score is at most `(w·lexical + (1−w)·that) × its factor`.
    /// The `want`-th best final score is at least the `want`-th best of
    /// scores already known: the pool's (lexical part taken as 0) and the
    /// best `want` lexical matches outside it (their cosines computed).
    /// A match whose bound is below that floor cannot rank.
    #[allow(clippy::too_many_arguments)]
    fn keep_could_rank_hybrid(
        &self,
        q: &Query<'_>,
        probe: &crate::semantic::Probe,
        pool: &[(u32, f32)],
        size: usize,
        pooled: &Stamped<()>,
        weight: f32,
        lexical_max: f32,
        matched: &mut Vec<(u32, f32, u16)>,
    ) {
        if q.want == 0 {
            return;
        }
        // The best `want` lexical matches outside the pool, picked in one
        // pass (a common word matches most of a project: no copy of them all).
        let rest = best_n(
            matched
                .iter()
                .filter(|(slot, _, _)| !pooled.contains(*slot))
                .map(|(slot, s, _)| (*slot, *s)),
            q.want,
        );
        if rest.is_empty() {
            return;
        }
        let outside = match pool.len() >= size {
            true => pool.iter().map(|(_, c)| *c).fold(f32::INFINITY, f32::min),
            false => crate::semantic::MIN_SIMILARITY,
        };
        let semantic_part = (1.0 - weight) * fuse::semantic_norm(outside);
        let fused = |lexical: f32, cosine: f32| {
            weight * (lexical / lexical_max) + (1.0 - weight) * fuse::semantic_norm(cosine)
        };
        // Scores known to be reached: the pool's, and the best lexical matches'.
        let best: Vec<u32> = rest.iter().map(|(slot, _)| *slot).collect();
        let cosines = self.semantic.similarities(probe, &best);
        let text = |slot: u32| self.slots[slot as usize].text_hash;
        let mut known: Vec<(f64, u64)> = pool
            .iter()
            .map(|(slot, c)| {
                let score = fuse::semantic_norm(*c) as f64 * (1.0 - weight) as f64 * self.factor(*slot, q);
                (score, text(*slot))
            })
            .chain(rest.iter().map(|(slot, s)| {
                let cosine = cosines.iter().find(|(c, _)| c == slot).map_or(0.0, |(_, c)| *c);
                (fused(*s, cosine) as f64 * self.factor(*slot, q), text(*slot))
            }))
            .collect();
        // As in `keep_could_rank`: reached by `want` hits holding at least
        // `SAY_ONCE_DEPTH` different texts (0 when those are not known).
        let best_first = |a: &(f64, u64), b: &(f64, u64)| b.0.total_cmp(&a.0);
        let floor = match known.len() >= q.want {
            true => {
                best_holding_texts(&mut known, q.want, best_first, |k| k.1).map_or(0.0, |n| known[n - 1].0)
            }
            false => 0.0,
        };
        matched.retain(|(slot, s, _)| {
            pooled.contains(*slot)
                || self.can_reach(
                    (weight * (s / lexical_max) + semantic_part) as f64,
                    *slot,
                    q,
                    floor,
                )
        });
    }

    /// Every indexed memory's id, source, attributes and whether it has a
    /// vector (to compare an index with a rebuild of it).
    pub fn snapshot(&self) -> Vec<Entry> {
        let mut out: Vec<_> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.alive)
            .map(|(slot, s)| {
                (
                    s.id,
                    s.source,
                    s.attrs.clone(),
                    s.text_hash,
                    self.semantic.has(slot as u32),
                )
            })
            .collect();
        out.sort_by_key(|e| e.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};
    use proptest::prelude::*;

    use std::sync::Arc;

    use super::*;
    use crate::{Filters, State};

    /// The search as it was before [`ProjectIndex::keep_could_rank_hybrid`] and
    /// [`ProjectIndex::keep_could_rank`]: the cosine of every lexical
    /// match, every candidate scored (lexical mode when `q.vector` is `None`).
    fn unpruned(index: &ProjectIndex, q: &Query<'_>) -> Vec<(Uuid, f64)> {
        let admit = |slot: u32| {
            let s = &index.slots[slot as usize];
            s.alive && q.admits(s.source, &s.attrs) && q.filters.narrowed_to(&s.id)
        };
        let terms = tokenize::query_terms(q.text);
        let lexical: Vec<(u32, f32)> = index
            .lexical
            .score(&terms, admit)
            .into_iter()
            .map(|(slot, s, _)| (slot, s))
            .collect();
        let (pool, weight, max) = match q.vector {
            Some(v) => {
                let probe = index.semantic.probe(v);
                let (mut pool, _) = index.semantic_pool(&probe, SEMANTIC_POOL.max(q.want * 4), admit);
                let rest: Vec<u32> = lexical
                    .iter()
                    .map(|(slot, _)| *slot)
                    .filter(|slot| !pool.iter().any(|(p, _)| p == slot))
                    .collect();
                pool.extend(index.semantic.similarities(&probe, &rest));
                (
                    pool,
                    q.lexical_weight.unwrap(),
                    Some(index.lexical.max_score(&terms)),
                )
            }
            None => (vec![], 1.0, None),
        };
        let mut hits: Vec<(u32, f64)> = fuse::combine(&lexical, &pool, weight, max, index.slots.len())
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .map(|(slot, s)| (slot, s as f64 * index.factor(slot, q)))
            .collect();
        hits.sort_by(|a, b| {
            let (x, y) = (&index.slots[a.0 as usize], &index.slots[b.0 as usize]);
            b.1.total_cmp(&a.1)
                .then(y.attrs.created_at.cmp(&x.attrs.created_at))
                .then(y.id.cmp(&x.id))
        });
        say_each_once(&mut hits, |slot| index.slots[slot as usize].text_hash);
        hits.truncate(q.want);
        hits.into_iter()
            .map(|(slot, s)| (index.slots[slot as usize].id, s))
            .collect()
    }

    fn unit(seed: u64, centre: u64, dims: usize) -> Vec<f32> {
        // Deterministic pseudo-random: two centres, each memory near one, so
        // the semantic pool is full of close neighbours and its floor is high.
        let value = |i: usize, s: u64| {
            ((s.wrapping_mul(2654435761).wrapping_add(i as u64 * 40503) % 1000) as f32) / 500.0 - 1.0
        };
        let v: Vec<f32> = (0..dims)
            .map(|i| value(i, centre) + 0.6 * value(i, seed))
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn a_repeated_text_gives_way_to_every_text_of_its_own() {
        // Slots 0..7 with texts a, a, b, c, d, a, e: the repeats of `a` go
        // last, in their order.
        let texts = [1u64, 1, 2, 3, 4, 1, 5];
        let mut hits: Vec<(u32, f64)> = (0..7).map(|s| (s, 10.0 - s as f64)).collect();
        say_each_once(&mut hits, |slot| texts[slot as usize]);
        let order: Vec<u32> = hits.iter().map(|(s, _)| *s).collect();
        assert_eq!(order, [0, 2, 3, 4, 6, 1, 5]);
    }

    /// Twelve routine notes written alike, each matching the query better
    /// than the one fact does, one more with a text of its own, and two
    /// summaries of one request.
    fn routine_notes_and_a_fact() -> (ProjectIndex, chrono::DateTime<Utc>) {
        let now = Utc::now();
        let attrs = |hours: i64, kind: Option<&str>| Attrs {
            created_at: now - Duration::hours(hours),
            state: State::Live,
            kind: kind.map(str::to_string),
            session_id: None,
            feedback: 1.0,
            private_to: None,
        };
        let mut index = ProjectIndex::default();
        for i in 0..13u128 {
            let body = match i {
                12 => "deploy pipeline deploy pipeline run finished green, slowly",
                _ => "deploy pipeline deploy pipeline run finished green",
            };
            let doc = Doc::observation(
                Uuid::from_u128(100 + i),
                attrs(i as i64, Some("change")),
                "Deploy pipeline run",
                "",
                &[],
                body,
                "",
                &[],
            );
            index.upsert(doc);
        }
        let fact = "The deploy pipeline failed: the registry-creds secret had expired";
        index.upsert(Doc::observation(
            Uuid::from_u128(1),
            attrs(900, Some("bugfix")),
            fact,
            "",
            &[],
            "rotated it",
            "",
            &[],
        ));
        for (id, learned) in [
            (2u128, "deploy pipeline deploy pipeline both turns"),
            (3, "deploy pipeline first turn"),
        ] {
            index.upsert(Doc::summary(
                Uuid::from_u128(id),
                attrs(50, None),
                "Fix the deploy pipeline",
                [learned, ""],
                ["", "", ""],
            ));
        }
        (index, now)
    }

    #[test]
    fn a_narrowed_search_finds_only_the_memories_it_was_narrowed_to() {
        let (index, now) = routine_notes_and_a_fact();
        let ids = |only: Option<Vec<u128>>| -> Vec<u128> {
            let filters = Filters {
                only: only.map(|ids| Arc::new(ids.into_iter().map(Uuid::from_u128).collect())),
                ..Filters::default()
            };
            let query = Query {
                project_id: Uuid::nil(),
                text: "deploy pipeline",
                exclude: "",
                vector: None,
                filters: &filters,
                as_of: now,
                summaries: true,
                mode: Mode::Lexical,
                want: 20,
                lexical_weight: None,
            };
            index.search(&query).iter().map(|h| h.id.as_u128()).collect()
        };
        let all = ids(None);
        assert!(all.len() > 3, "{all:?}");
        assert_eq!(ids(Some(vec![1])), [1]);
        assert_eq!(ids(Some(vec![3, 1])).len(), 2);
        assert_eq!(ids(Some(vec![])), Vec::<u128>::new());
        // An id of no memory of the project narrows to nothing more.
        assert_eq!(ids(Some(vec![1, 999_999])), [1]);
    }

    #[test]
    fn routine_notes_written_alike_take_one_place_among_the_first_hits() {
        let (index, now) = routine_notes_and_a_fact();
        let filters = Filters::default();
        let query = |want: usize| Query {
            project_id: Uuid::nil(),
            text: "deploy pipeline",
            exclude: "",
            vector: None,
            filters: &filters,
            as_of: now,
            summaries: true,
            mode: Mode::Lexical,
            want,
            lexical_weight: None,
        };
        let ids = |want: usize| -> Vec<u128> {
            index
                .search(&query(want))
                .iter()
                .map(|h| h.id.as_u128())
                .collect()
        };
        let five = ids(5);
        // One of the twelve alike, the note with a text of its own (a title
        // alone does not make a repeat), the fact and both summaries (a
        // summary's title is its request, which its session's summaries share).
        assert!(five.contains(&1), "the fact is among the first five: {five:?}");
        assert!(five.contains(&112), "{five:?}");
        assert!(five.contains(&2) && five.contains(&3), "{five:?}");
        assert_eq!(
            five.iter().filter(|id| (100..112).contains(*id)).count(),
            1,
            "{five:?}"
        );
        // By score alone the fact would be below all twelve.
        let hits = index.search(&query(40));
        let score = |id: u128| hits.iter().find(|h| h.id.as_u128() == id).unwrap().score;
        assert!((100..112).all(|id| score(id) > score(1)), "{hits:?}");
        let all = ids(40);
        assert_eq!(all.len(), 16);
        assert_eq!(&all[..5], &five[..], "pages of one search agree");
        assert_eq!(&ids(3)[..], &five[..3]);
    }

    /// A live note written `hours` before `now`, with its vector.
    fn put(
        index: &mut ProjectIndex,
        now: chrono::DateTime<Utc>,
        id: u128,
        hours: i64,
        text: [&str; 2],
        vector: &[f32],
    ) {
        let attrs = Attrs {
            created_at: now - Duration::hours(hours),
            state: State::Live,
            kind: Some("change".into()),
            session_id: None,
            feedback: 1.0,
            private_to: None,
        };
        let id = Uuid::from_u128(id);
        index.upsert(Doc::observation(id, attrs, text[0], "", &[], text[1], "", &[]));
        index.set_vector(id, vector);
    }

    /// "deploy pipeline" with `vector`, in `mode`, `want` hits.
    fn deploy_pipeline<'a>(
        filters: &'a Filters,
        now: chrono::DateTime<Utc>,
        vector: &'a [f32],
        mode: Mode,
        want: usize,
    ) -> Query<'a> {
        Query {
            project_id: Uuid::nil(),
            text: "deploy pipeline",
            exclude: "",
            vector: Some(vector),
            filters,
            as_of: now,
            summaries: true,
            mode,
            want,
            lexical_weight: None,
        }
    }

    #[test]
    fn copies_that_outscore_everything_else_still_take_one_of_the_first_places() {
        let now = Utc::now();
        let mut index = ProjectIndex::default();
        let routine = unit(7, 0, 32);
        let copy_text = [
            "Deploy pipeline run",
            "deploy pipeline deploy pipeline run finished green",
        ];
        for i in 0..60u128 {
            put(&mut index, now, 1000 + i, i as i64, copy_text, &routine);
        }
        for i in 0..25u128 {
            let (title, body) = (
                format!("Deploy note {i}"),
                format!("the deploy pipeline step {i} changed"),
            );
            put(
                &mut index,
                now,
                1 + i,
                500 + i as i64,
                [&title, &body],
                &unit(100 + i as u64, 0, 32),
            );
        }
        let filters = Filters::default();
        for mode in [Mode::Lexical, Mode::Hybrid] {
            let query = |want: usize| deploy_pipeline(&filters, now, &routine, mode, want);
            let copy = |h: &Hit| h.id.as_u128() >= 1000;
            let all = index.search(&query(100));
            assert_eq!(all.len(), 85, "{mode:?}");
            let lowest_copy = all
                .iter()
                .filter(|h| copy(h))
                .map(|h| h.score)
                .fold(f64::INFINITY, f64::min);
            let best_note = all
                .iter()
                .filter(|h| !copy(h))
                .map(|h| h.score)
                .fold(0.0, f64::max);
            assert!(
                lowest_copy > best_note,
                "{mode:?}: by score every copy is above every note"
            );
            let first = index.search(&query(20));
            assert_eq!(first.iter().filter(|h| copy(h)).count(), 1, "{mode:?}: {first:?}");
            assert!(copy(&first[0]), "the best hit keeps its place");
            let ids = |hits: &[Hit]| hits.iter().map(|h| h.id).collect::<Vec<_>>();
            assert_eq!(
                ids(&first),
                ids(&all[..20]),
                "{mode:?}: pages of one search agree"
            );
            assert!(all[20..79].iter().all(copy), "{mode:?}: the other copies follow");
            assert_eq!(ids(&index.search(&query(5))), ids(&first[..5]), "{mode:?}");
        }
    }

    #[test]
    fn copies_that_fill_the_semantic_pool_do_not_keep_out_what_only_meaning_finds() {
        let now = Utc::now();
        let mut index = ProjectIndex::default();
        let routine = unit(7, 0, 32);
        let copies = SEMANTIC_POOL as u128 + 50;
        for i in 0..copies {
            let text = ["Deploy pipeline run", "deploy pipeline run finished green"];
            put(&mut index, now, 10_000 + i, i as i64 % 90, text, &routine);
        }
        // Near the query by meaning, without its words.
        for i in 0..25u128 {
            let (title, body) = (
                format!("Rollout note {i}"),
                format!("the rollout step {i} changed"),
            );
            let near: Vec<f32> = routine
                .iter()
                .zip(unit(100 + i as u64, 1, 32))
                .map(|(a, b)| a + 0.5 * b)
                .collect();
            put(&mut index, now, 1 + i, 500 + i as i64, [&title, &body], &near);
        }
        let filters = Filters::default();
        for mode in [Mode::Semantic, Mode::Hybrid] {
            let hits = index.search(&deploy_pipeline(&filters, now, &routine, mode, 20));
            let notes = hits.iter().filter(|h| h.id.as_u128() < 10_000).count();
            assert_eq!(notes, 19, "{mode:?}: one copy, then what meaning finds: {hits:?}");
        }
    }

    proptest! {
        /// The heap's pick holds the same scores as the best `n` of a full sort.
        #[test]
        fn best_n_keeps_the_scores_a_sort_puts_first(
            scores in proptest::collection::vec(0u8..40, 0..200),
            n in 1usize..30,
        ) {
            let items: Vec<(u32, f32)> =
                scores.iter().enumerate().map(|(i, s)| (i as u32, *s as f32)).collect();
            let mut picked: Vec<f32> = best_n(items.iter().copied(), n).iter().map(|p| p.1).collect();
            picked.sort_by(|a, b| b.total_cmp(a));
            let mut sorted: Vec<f32> = items.iter().map(|p| p.1).collect();
            sorted.sort_by(|a, b| b.total_cmp(a));
            sorted.truncate(n);
            prop_assert_eq!(picked, sorted);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Leaving out the matches that cannot rank changes no hit, order or
        /// score, in hybrid and in lexical mode.
        #[test]
        fn pruned_search_equals_the_exhaustive_one(
            seed in 0u64..1_000_000,
            memories in 900usize..2000,
            want in 1usize..25,
            weight in 0.05f32..0.95,
            words in 1usize..6,
            lexical_only in any::<bool>(),
            copies in prop_oneof![Just(0usize), 1usize..80],
            copies_near in any::<bool>(),
            narrowed in any::<bool>(),
        ) {
            let vocabulary = ["deploy", "pipeline", "secret", "registry", "cache", "timeout", "retry", "invoice", "session", "token", "index", "query"];
            let now = Utc::now();
            let mut index = ProjectIndex::default();
            let pick = |i: u64, k: u64| vocabulary[((seed ^ (i * 7 + k * 13)).wrapping_mul(0x9E37_79B9) >> 7) as usize % vocabulary.len()];
            for i in 0..memories as u64 {
                let id = Uuid::from_u128(i as u128 + 1);
                let attrs = Attrs {
                    created_at: now - Duration::hours(((seed + i * 37) % 5000) as i64),
                    state: [State::Live, State::Live, State::Stale, State::Superseded][((seed + i) % 4) as usize],
                    kind: Some("discovery".into()),
                    session_id: None,
                    feedback: [1.0, 1.0, 1.5, 0.25, 1.2][((seed / 3 + i) % 5) as usize],
                    private_to: None,
                };
                let title: Vec<&str> = (0..3).map(|k| pick(i, k)).collect();
                let body: Vec<&str> = (3..3 + (i % 7)).map(|k| pick(i, k)).collect();
                index.upsert(Doc::observation(id, attrs, &title.join(" "), "", &[], &body.join(" "), "", &[]));
                if (seed + i) % 9 != 0 {
                    index.set_vector(id, &unit(seed + i, (seed + i) % 2, 32));
                }
            }
            let text: Vec<&str> = (0..words as u64).map(|k| pick(seed % 97, 50 + k)).collect();
            let text = text.join(" ");
            let vector = unit(seed + 1, seed % 2, 32);
            // Copies of one note that says the query itself, most of them
            // above every other memory (those past `SAY_ONCE_DEPTH` included),
            // near the query's vector (in the semantic pool) or far from it.
            let copy_vector = match copies_near {
                true => vector.clone(),
                false => unit(seed + 3, (seed + 1) % 2, 32),
            };
            for i in 0..copies as u64 {
                let id = Uuid::from_u128(1_000_000 + i as u128);
                let attrs = Attrs {
                    created_at: now - Duration::minutes(((seed + i * 11) % 300) as i64),
                    state: State::Live,
                    kind: Some("discovery".into()),
                    session_id: None,
                    feedback: 1.5,
                    private_to: None,
                };
                index.upsert(Doc::observation(id, attrs, &text, "", &[], &text, "", &[]));
                index.set_vector(id, &copy_vector);
            }
            // Half the searches narrowed to every third memory (and a third
            // of the copies), as a filter Postgres answers would.
            let filters = Filters {
                only: narrowed.then(|| {
                    Arc::new(
                        (1..=memories as u128)
                            .chain(1_000_000..1_000_000 + copies as u128)
                            .filter(|n| n % 3 == 0)
                            .map(Uuid::from_u128)
                            .collect(),
                    )
                }),
                ..Filters::default()
            };
            let q = Query {
                project_id: Uuid::nil(),
                text: &text,
                exclude: "",
                vector: (!lexical_only).then_some(vector.as_slice()),
                filters: &filters,
                as_of: now,
                summaries: true,
                mode: if lexical_only { Mode::Lexical } else { Mode::Hybrid },
                want,
                lexical_weight: Some(weight),
            };
            let got: Vec<(Uuid, f64)> = index.search(&q).into_iter().map(|h| (h.id, h.score)).collect();
            prop_assert!(got.iter().all(|(id, _)| filters.narrowed_to(id)), "a hit outside the narrowing");
            prop_assert_eq!(got, unpruned(&index, &q));
        }
    }
}
