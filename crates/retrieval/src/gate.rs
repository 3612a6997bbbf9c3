//! Admission from a byte a memory: whether it is alive and searchable, a
//! summary, private, in a dense array by slot, with the time each was
//! written and its score's weight (state and feedback) beside it. The hot
//! loops (every posting, every vector, every match a pruning pass weighs)
//! read these; only a private memory or a query with a type, session,
//! date or narrowing filter reads the full attributes (`Query::admits`),
//! which live elsewhere in memory.

use chrono::{DateTime, Utc};

use crate::{
    doc::{Attrs, Source},
    query::Query,
};

const ALIVE: u8 = 1;
const SEARCHABLE: u8 = 2;
const SUMMARY: u8 = 4;
const PRIVATE: u8 = 8;

fn flags(source: Source, attrs: &Attrs) -> u8 {
    let mut flags = ALIVE;
    if attrs.state.searchable() {
        flags |= SEARCHABLE;
    }
    if source == Source::Summary {
        flags |= SUMMARY;
    }
    if attrs.private_to.is_some() {
        flags |= PRIVATE;
    }
    flags
}

/// What a memory's final score is multiplied by before recency: its
/// state's weight and its feedback.
pub fn weight(attrs: &Attrs) -> f64 {
    attrs.state.weight() as f64 * attrs.feedback as f64
}

/// Every slot's admission facts: a byte of flags (a 100,000-memory
/// project's fit in a core's cache) and the time written, which a query is
/// spared when it asks as of a time after the newest memory (a search
/// "now", nearly always).
#[derive(Default)]
pub struct Gates {
    flags: Vec<u8>,
    created_at: Vec<DateTime<Utc>>,
    /// [`weight`] by slot.
    weights: Vec<f64>,
    /// The latest time written ever indexed (not lowered by a removal).
    newest: Option<DateTime<Utc>>,
}

impl Gates {
    /// The next slot's.
    pub fn push(&mut self, source: Source, attrs: &Attrs) {
        self.flags.push(flags(source, attrs));
        self.created_at.push(attrs.created_at);
        self.weights.push(weight(attrs));
        self.newest = self.newest.max(Some(attrs.created_at));
    }

    /// `slot`'s attributes changed in place.
    pub fn set(&mut self, slot: u32, source: Source, attrs: &Attrs) {
        self.flags[slot as usize] = flags(source, attrs);
        self.created_at[slot as usize] = attrs.created_at;
        self.weights[slot as usize] = weight(attrs);
        self.newest = self.newest.max(Some(attrs.created_at));
    }

    /// The slot is gone (replaced or removed).
    pub fn close(&mut self, slot: u32) {
        self.flags[slot as usize] &= !ALIVE;
    }

    /// When `slot`'s memory was written, and its [`weight`]: what a score's
    /// factor is made of, read without touching the full attributes.
    #[inline]
    pub fn factor_of(&self, slot: u32) -> (DateTime<Utc>, f64) {
        (self.created_at[slot as usize], self.weights[slot as usize])
    }

    pub fn bytes(&self) -> usize {
        self.flags.capacity()
            + self.created_at.capacity() * std::mem::size_of::<DateTime<Utc>>()
            + self.weights.capacity() * std::mem::size_of::<f64>()
    }
}

/// What one query asks of every gate, worked out once.
pub struct Admission<'g> {
    gates: &'g Gates,
    as_of: DateTime<Utc>,
    /// Some memory was written after `as_of`.
    check_time: bool,
    summaries: bool,
    /// No type, session, date or narrowing filter.
    plain: bool,
    sees_all: bool,
}

impl<'g> Admission<'g> {
    pub fn new(gates: &'g Gates, q: &Query<'_>) -> Admission<'g> {
        let f = q.filters;
        Admission {
            gates,
            as_of: q.as_of,
            check_time: gates.newest.is_some_and(|newest| newest > q.as_of),
            summaries: q.summaries && f.kinds.is_empty(),
            plain: f.kinds.is_empty()
                && f.session_id.is_none()
                && f.since.is_none()
                && f.until.is_none()
                && f.only.is_none(),
            sees_all: f.sees_all,
        }
    }

    /// `Some` when the gate alone decides (as `alive && Query::admits`
    /// would); `None` when the full attributes must.
    #[inline]
    pub fn decide(&self, slot: u32) -> Option<bool> {
        let flags = self.gates.flags[slot as usize];
        if flags & (ALIVE | SEARCHABLE) != ALIVE | SEARCHABLE
            || (flags & SUMMARY != 0 && !self.summaries)
            || (self.check_time && self.gates.created_at[slot as usize] > self.as_of)
        {
            return Some(false);
        }
        (self.plain && (flags & PRIVATE == 0 || self.sees_all)).then_some(true)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use proptest::prelude::*;
    use uuid::Uuid;

    use super::*;
    use crate::{Filters, Mode, State};

    /// A query with no text, only what admission looks at.
    fn query(filters: &Filters, as_of: DateTime<Utc>, summaries: bool) -> Query<'_> {
        Query {
            project_id: Uuid::nil(),
            text: "",
            exclude: "",
            vector: None,
            filters,
            as_of,
            summaries,
            mode: Mode::Hybrid,
            want: 5,
            lexical_weight: None,
        }
    }

    proptest! {
        /// The gate's answer, where it gives one, is the full check's.
        #[test]
        fn the_gate_agrees_with_the_full_check(
            summary in any::<bool>(),
            alive in any::<bool>(),
            state in 0usize..5,
            kind in 0usize..3,
            session in 0u128..3,
            private_to in 0u128..3,
            age_s in -5i64..5,
            kinds in 0usize..3,
            session_filter in 0u128..3,
            since_s in -6i64..6,
            until_s in -6i64..6,
            viewer in 0u128..3,
            sees_all in any::<bool>(),
            summaries in any::<bool>(),
            unfiltered in any::<bool>(),
            other_age_s in -5i64..5,
        ) {
            let now = Utc::now();
            let some_uuid = |n: u128| (n > 0).then(|| Uuid::from_u128(n));
            let names = ["bugfix", "discovery"];
            let attrs = Attrs {
                created_at: now - Duration::seconds(age_s),
                state: [State::Live, State::Stale, State::Superseded, State::Merged, State::Archived][state],
                kind: (!summary && kind > 0).then(|| names[kind - 1].to_string()),
                session_id: some_uuid(session),
                feedback: 1.0,
                private_to: some_uuid(private_to),
            };
            // Half the queries have no type, session or date filter (the
            // gate decides most of those alone), half draw each at random.
            let filters = Filters {
                kinds: names[..kinds].iter().map(|k| k.to_string()).collect(),
                session_id: some_uuid(session_filter),
                since: (since_s > -6).then(|| now - Duration::seconds(since_s)),
                until: (until_s > -6).then(|| now - Duration::seconds(until_s)),
                viewer: some_uuid(viewer),
                sees_all,
                only: None,
            };
            let filters = match unfiltered {
                true => Filters { viewer: filters.viewer, sees_all, ..Filters::default() },
                false => filters,
            };
            let q = query(&filters, now, summaries);
            let source = if summary { Source::Summary } else { Source::Observation };
            let mut gates = Gates::default();
            gates.push(source, &attrs);
            if !alive {
                gates.close(0);
            }
            // Another memory, written before or after `as_of`: whether the
            // query must check times at all.
            let other = Attrs { created_at: now - Duration::seconds(other_age_s), ..attrs.clone() };
            gates.push(Source::Observation, &other);
            let full = alive && q.admits(source, &attrs);
            if let Some(fast) = Admission::new(&gates, &q).decide(0) {
                prop_assert_eq!(fast, full);
            }
        }
    }

    #[test]
    fn the_factor_follows_a_memorys_state_and_feedback_in_place() {
        let attrs = Attrs {
            created_at: Utc::now() - Duration::days(3),
            state: State::Live,
            kind: None,
            session_id: None,
            feedback: 1.0,
            private_to: None,
        };
        let mut gates = Gates::default();
        gates.push(Source::Observation, &attrs);
        assert_eq!(gates.factor_of(0), (attrs.created_at, 1.0));
        let marked = Attrs {
            state: State::Stale,
            feedback: 1.2,
            created_at: attrs.created_at - Duration::days(1),
            ..attrs
        };
        gates.set(0, Source::Observation, &marked);
        assert_eq!(
            gates.factor_of(0),
            (marked.created_at, 0.5 * 1.2f32 as f64),
            "an edit in place (a feedback mark, a state change) must reach the factor"
        );
    }

    #[test]
    fn a_plain_query_is_decided_by_the_gate_alone() {
        let attrs = Attrs {
            created_at: Utc::now() - Duration::days(1),
            state: State::Live,
            kind: Some("bugfix".into()),
            session_id: None,
            feedback: 1.0,
            private_to: None,
        };
        let filters = Filters::default();
        let q = query(&filters, Utc::now(), true);
        let mut gates = Gates::default();
        gates.push(Source::Observation, &attrs);
        let private = Attrs {
            private_to: Some(Uuid::from_u128(7)),
            ..attrs.clone()
        };
        gates.push(Source::Observation, &private);
        assert_eq!(Admission::new(&gates, &q).decide(0), Some(true));
        assert_eq!(Admission::new(&gates, &q).decide(1), None);
        // Written after the query's as-of: refused, from the gate.
        let later = Attrs {
            created_at: Utc::now() + Duration::days(1),
            ..attrs
        };
        gates.set(1, Source::Observation, &later);
        assert_eq!(Admission::new(&gates, &q).decide(1), Some(false));
    }
}
