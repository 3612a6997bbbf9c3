//! One project's index: its memories' attributes by slot, the lexical and
//! semantic arms over the same slots, and the search that runs both,
//! filters them alike and fuses them.

use std::{
    collections::HashMap,
    hash::{DefaultHasher, Hash, Hasher},
};

use uuid::Uuid;

use crate::{
    doc::{Attrs, Doc, Fields, Source},
    fuse,
    lexical::Lexical,
    query::{Hit, Mode, Query},
    semantic::Semantic,
    tokenize,
};

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

/// A memory as indexed: id, source, attributes, text hash, has a vector.
pub type Entry = (Uuid, Source, Attrs, u64, bool);

#[derive(Default)]
pub struct ProjectIndex {
    slots: Vec<Slot>,
    by_id: HashMap<Uuid, u32>,
    lexical: Lexical,
    semantic: Semantic,
    /// Slots replaced or removed (their postings linger until a rebuild).
    dead: usize,
}

fn hash_text(text: &Fields<String>) -> u64 {
    let mut h = DefaultHasher::new();
    (&text.title, &text.facts, &text.files, &text.body).hash(&mut h);
    h.finish()
}

impl ProjectIndex {
    /// Adds a memory, or updates one: attributes in place when its text is
    /// the same, otherwise a new slot.
    pub fn upsert(&mut self, doc: Doc) {
        let text_hash = hash_text(&doc.text);
        if let Some(&slot) = self.by_id.get(&doc.id) {
            let s = &mut self.slots[slot as usize];
            if s.text_hash == text_hash {
                s.attrs = doc.attrs;
                return;
            }
        }
        // A new text makes the old vector stale: the writer deletes it and
        // stores a new one, which arrives through `set_vector`.
        self.remove(doc.id);
        let slot = self.slots.len() as u32;
        self.lexical.add(slot, &doc.text);
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
            + self.by_id.capacity() * 24
            + self.lexical.bytes()
            + self.semantic.bytes()
    }

    /// Every memory the query admits that either arm finds, best first, at
    /// most `query.want`. Every lexical match is scored, and every vector
    /// compared: the semantic arm keeps its best `SEMANTIC_POOL` (at least
    /// four times what is wanted) and the cosine of every lexical match, so
    /// a memory outside both can never outscore one inside (its fused score
    /// is at most the pool's lowest; only the state and recency factors,
    /// ×0.25..×1.1, could reorder at that edge).
    pub fn search(&self, q: &Query<'_>) -> Vec<Hit> {
        let excluded = self.lexical.matching(&tokenize::query_terms(q.exclude));
        let admit = |slot: u32| {
            let s = &self.slots[slot as usize];
            s.alive && !excluded.contains(&slot) && q.admits(s.source, &s.attrs)
        };
        let lexical_on = matches!(q.mode, Mode::Lexical | Mode::Hybrid);
        let semantic_on = matches!(q.mode, Mode::Semantic | Mode::Hybrid) && q.vector.is_some();
        let terms = tokenize::query_terms(q.text);
        let matched = if lexical_on {
            self.lexical.score(&terms, admit)
        } else {
            vec![]
        };
        let lexical: Vec<(u32, f32)> = matched.iter().map(|(slot, s, _)| (*slot, *s)).collect();
        let semantic = match (semantic_on, q.vector) {
            (true, Some(v)) => {
                let mut pool = self
                    .semantic
                    .top(v, SEMANTIC_POOL.max(q.want.saturating_mul(4)), admit);
                let pooled: std::collections::HashSet<u32> = pool.iter().map(|(slot, _)| *slot).collect();
                let rest: Vec<u32> = lexical
                    .iter()
                    .map(|(slot, _)| *slot)
                    .filter(|slot| !pooled.contains(slot))
                    .collect();
                pool.extend(self.semantic.cosines(v, &rest));
                pool
            }
            _ => vec![],
        };
        let weight = match (lexical_on, semantic_on) {
            (true, true) => q.lexical_weight.unwrap_or_else(fuse::lexical_weight),
            (true, false) => 1.0,
            (false, _) => 0.0,
        };
        // One arm alone keeps its own scale (BM25; cosine similarity), so a
        // vector search's scores read as similarities; fusion normalises.
        let lexical_max = (weight > 0.0 && weight < 1.0).then(|| self.lexical.max_score(&terms));
        let fused = fuse::combine(&lexical, &semantic, weight, lexical_max, self.slots.len());
        let mut hits: Vec<(u32, f64)> = fused
            .into_iter()
            .filter(|(_, s)| *s > 0.0)
            .map(|(slot, s)| {
                let m = &self.slots[slot as usize];
                let mut score = s as f64 * m.attrs.state.weight() as f64 * m.attrs.feedback as f64;
                if q.mode != Mode::Semantic {
                    score *= fuse::recency(m.attrs.created_at, q.as_of);
                }
                (slot, score)
            })
            .collect();
        let order = |a: &(u32, f64), b: &(u32, f64)| {
            let (x, y) = (&self.slots[a.0 as usize], &self.slots[b.0 as usize]);
            b.1.total_cmp(&a.1)
                .then(y.attrs.created_at.cmp(&x.attrs.created_at))
                .then(y.id.cmp(&x.id))
        };
        if hits.len() > q.want && q.want > 0 {
            hits.select_nth_unstable_by(q.want - 1, order);
            hits.truncate(q.want);
        }
        hits.sort_by(order);
        hits.truncate(q.want);
        // Each arm's own score of the hits kept (for gates and reports).
        let mut raw: std::collections::HashMap<u32, (f32, f32, u16)> =
            hits.iter().map(|(s, _)| (*s, (0.0, 0.0, 0))).collect();
        for (slot, s, n) in &matched {
            if let Some(r) = raw.get_mut(slot) {
                (r.0, r.2) = (*s, *n);
            }
        }
        for (slot, s) in &semantic {
            if let Some(r) = raw.get_mut(slot) {
                r.1 = *s;
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
