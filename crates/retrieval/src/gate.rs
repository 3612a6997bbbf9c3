//! Admission from 16 bytes a memory: whether it is alive and searchable, a
//! summary, private, and when it was written, in a dense array by slot. The
//! hot loops (every posting, every vector) ask it first; only a private
//! memory or a query with a type, session or date filter reads the full
//! attributes (`Query::admits`), which live elsewhere in memory.

use chrono::{DateTime, Utc};

use crate::{
    doc::{Attrs, Source},
    query::Query,
};

const ALIVE: u8 = 1;
const SEARCHABLE: u8 = 2;
const SUMMARY: u8 = 4;
const PRIVATE: u8 = 8;

/// One slot's admission facts.
#[derive(Clone, Copy, Debug)]
pub struct Gate {
    created_at: DateTime<Utc>,
    flags: u8,
}

impl Gate {
    pub fn new(source: Source, attrs: &Attrs) -> Gate {
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
        Gate {
            created_at: attrs.created_at,
            flags,
        }
    }

    /// The slot is gone (replaced or removed).
    pub fn close(&mut self) {
        self.flags &= !ALIVE;
    }
}

/// What one query asks of every gate, worked out once.
pub struct Admission {
    as_of: DateTime<Utc>,
    summaries: bool,
    /// No type, session or date filter.
    plain: bool,
    sees_all: bool,
}

impl Admission {
    pub fn new(q: &Query<'_>) -> Admission {
        let f = q.filters;
        Admission {
            as_of: q.as_of,
            summaries: q.summaries && f.kinds.is_empty(),
            plain: f.kinds.is_empty() && f.session_id.is_none() && f.since.is_none() && f.until.is_none(),
            sees_all: f.sees_all,
        }
    }

    /// `Some` when the gate alone decides (as `alive && Query::admits`
    /// would); `None` when the full attributes must.
    #[inline]
    pub fn decide(&self, gate: Gate) -> Option<bool> {
        if gate.flags & (ALIVE | SEARCHABLE) != ALIVE | SEARCHABLE
            || gate.created_at > self.as_of
            || (gate.flags & SUMMARY != 0 && !self.summaries)
        {
            return Some(false);
        }
        (self.plain && (gate.flags & PRIVATE == 0 || self.sees_all)).then_some(true)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use proptest::prelude::*;
    use uuid::Uuid;

    use super::*;
    use crate::{Filters, Mode, State};

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
            };
            let filters = match unfiltered {
                true => Filters { viewer: filters.viewer, sees_all, ..Filters::default() },
                false => filters,
            };
            let q = Query {
                project_id: Uuid::nil(),
                text: "",
                exclude: "",
                vector: None,
                filters: &filters,
                as_of: now,
                summaries,
                mode: Mode::Hybrid,
                want: 5,
                lexical_weight: None,
            };
            let source = if summary { Source::Summary } else { Source::Observation };
            let mut gate = Gate::new(source, &attrs);
            if !alive {
                gate.close();
            }
            let full = alive && q.admits(source, &attrs);
            if let Some(fast) = Admission::new(&q).decide(gate) {
                prop_assert_eq!(fast, full);
            }
        }
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
        let q = Query {
            project_id: Uuid::nil(),
            text: "",
            exclude: "",
            vector: None,
            filters: &filters,
            as_of: Utc::now(),
            summaries: true,
            mode: Mode::Hybrid,
            want: 5,
            lexical_weight: None,
        };
        assert_eq!(
            Admission::new(&q).decide(Gate::new(Source::Observation, &attrs)),
            Some(true)
        );
        let private = Attrs {
            private_to: Some(Uuid::from_u128(7)),
            ..attrs
        };
        assert_eq!(
            Admission::new(&q).decide(Gate::new(Source::Observation, &private)),
            None
        );
    }
}
