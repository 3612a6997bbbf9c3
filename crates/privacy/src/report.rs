//! `FilterReport`: what the privacy filter removed from one string or payload.

use std::collections::BTreeMap;

/// Counts of what the privacy filter did. Safe to log or store: it never
/// contains any of the removed text.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterReport {
    /// Spans removed by `<private>`, `<cairn-context>` or `<claude-mem-context>` tags.
    pub private_spans: u32,
    /// Redacted secrets per kind (e.g. `"github_token" => 2`).
    pub redactions: BTreeMap<&'static str, u32>,
    /// Bytes cut out of over-long strings by the size cap.
    pub elided_bytes: u64,
}

impl FilterReport {
    /// Adds the counts of `other` to this report.
    pub fn merge(&mut self, other: FilterReport) {
        self.private_spans = self.private_spans.saturating_add(other.private_spans);
        self.elided_bytes = self.elided_bytes.saturating_add(other.elided_bytes);
        for (kind, count) in other.redactions {
            self.add_redactions(kind, count);
        }
    }

    /// True when nothing was stripped, redacted or elided.
    pub fn is_clean(&self) -> bool {
        self.private_spans == 0 && self.elided_bytes == 0 && self.redaction_count() == 0
    }

    /// Total number of redacted secrets over all kinds.
    pub fn redaction_count(&self) -> u32 {
        self.redactions
            .values()
            .fold(0u32, |sum, n| sum.saturating_add(*n))
    }

    pub(super) fn add_redactions(&mut self, kind: &'static str, count: u32) {
        if count > 0 {
            let slot = self.redactions.entry(kind).or_insert(0);
            *slot = slot.saturating_add(count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_is_clean_tracks_them() {
        let mut a = FilterReport::default();
        assert!(a.is_clean());
        let mut b = FilterReport {
            private_spans: 2,
            elided_bytes: 10,
            ..FilterReport::default()
        };
        b.add_redactions("jwt", 1);
        b.add_redactions("github_token", 2);
        let mut c = FilterReport::default();
        c.add_redactions("jwt", 3);
        c.add_redactions("none", 0);
        a.merge(b);
        a.merge(c);
        assert!(!a.is_clean());
        assert_eq!(a.private_spans, 2);
        assert_eq!(a.elided_bytes, 10);
        assert_eq!(a.redactions.get("jwt"), Some(&4));
        assert_eq!(a.redactions.get("github_token"), Some(&2));
        assert!(!a.redactions.contains_key("none"));
        assert_eq!(a.redaction_count(), 6);
    }

    #[test]
    fn counts_saturate_instead_of_overflowing() {
        let mut a = FilterReport {
            private_spans: u32::MAX,
            elided_bytes: u64::MAX,
            ..FilterReport::default()
        };
        a.add_redactions("jwt", u32::MAX);
        a.add_redactions("openai_key", 5);
        a.merge(a.clone());
        assert_eq!(a.private_spans, u32::MAX);
        assert_eq!(a.elided_bytes, u64::MAX);
        assert_eq!(a.redaction_count(), u32::MAX);
    }

    #[test]
    fn serializes_in_camel_case() {
        let mut a = FilterReport {
            private_spans: 1,
            elided_bytes: 7,
            ..FilterReport::default()
        };
        a.add_redactions("jwt", 2);
        let json = serde_json::to_value(&a).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"privateSpans": 1, "redactions": {"jwt": 2}, "elidedBytes": 7})
        );
    }
}
