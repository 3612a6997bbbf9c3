//! Say each thing once: a block of memories given back on a prompt often
//! holds a session's summary and its turn's summary, whose facts are the
//! same lines ("done: …"). A later memory shows only the facts and the
//! narrative no earlier one showed, and a memory with nothing new is left
//! out, so its room goes to the next.

use std::collections::HashSet;

use super::gather::ObservationItem;

/// The lines already shown in a block, compared lower-cased with their
/// whitespace collapsed.
#[derive(Default)]
pub struct Said {
    lines: HashSet<String>,
}

fn key(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl Said {
    /// `item` without the facts and narrative already shown; `None` when it
    /// had some and every one of them was.
    pub fn new_in(&self, item: &ObservationItem) -> Option<ObservationItem> {
        let had = !item.facts.is_empty() || !item.narrative.trim().is_empty();
        let unsaid = |t: &str| !self.lines.contains(&key(t));
        let facts: Vec<String> = item.facts.iter().filter(|f| unsaid(f)).cloned().collect();
        let narrative = match unsaid(&item.narrative) {
            true => item.narrative.clone(),
            false => String::new(),
        };
        if had && facts.is_empty() && narrative.trim().is_empty() {
            return None;
        }
        Some(ObservationItem {
            facts,
            narrative,
            ..item.clone()
        })
    }

    /// Marks what `shown` showed: its facts and narrative as they were
    /// shown (a line cut to an excerpt is not the whole line, and a later
    /// memory still shows the whole).
    pub fn add(&mut self, shown: &ObservationItem) {
        for text in shown.facts.iter().chain(std::iter::once(&shown.narrative)) {
            if !text.trim().is_empty() {
                self.lines.insert(key(text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(facts: &[&str], narrative: &str) -> ObservationItem {
        ObservationItem {
            id: uuid::Uuid::nil(),
            kind: "summary".into(),
            title: "The products page got slow".into(),
            subtitle: String::new(),
            facts: facts.iter().map(|f| f.to_string()).collect(),
            narrative: narrative.into(),
            files_read: vec![],
            files_modified: vec![],
            created_at: chrono::Utc::now(),
            state: crate::memory::lifecycle::MemoryState::Live,
            root: None,
        }
    }

    #[test]
    fn a_later_memory_shows_only_what_no_earlier_one_did() {
        let mut said = Said::default();
        let session = item(&["done: Added the index, built CONCURRENTLY."], "");
        said.add(&said.new_in(&session).unwrap());
        let turn = item(
            &[
                "done:  added the index, built  CONCURRENTLY.",
                "ran scripts/explain_products.sql",
            ],
            "Added the index, built CONCURRENTLY.",
        );
        let shown = said.new_in(&turn).unwrap();
        assert_eq!(shown.facts, ["ran scripts/explain_products.sql"]);
        assert_eq!(shown.narrative, "Added the index, built CONCURRENTLY.");
        said.add(&shown);
        // Everything it holds was said: left out.
        assert!(said.new_in(&turn).is_none());
        // A memory of a title and files only has nothing to repeat.
        assert!(said.new_in(&item(&[], "")).is_some());
    }

    #[test]
    fn a_rendered_block_says_a_shared_fact_once_and_gives_its_room_to_the_next() {
        let fact =
            "done: The products query scanned all of product_prices; added product_prices_product_id_idx.";
        let mut others = item(
            &["learned: the refunds job retries three times before it pages."],
            "",
        );
        others.title = "Refund retries".into();
        let matches = [item(&[fact], ""), item(&[fact], ""), others];
        let block = super::super::prompt::render(&matches, 500, &super::super::focus::Focus::of("")).unwrap();
        assert_eq!(block.matches(fact).count(), 1, "{block}");
        assert_eq!(
            block.matches("### ").count(),
            2,
            "the repeat is left out: {block}"
        );
        assert!(block.contains("retries three times"), "{block}");
    }

    #[test]
    fn a_line_shown_as_an_excerpt_is_shown_whole_later() {
        let mut said = Said::default();
        said.add(&item(&["done: the products query … product_prices."], ""));
        let whole = item(&["done: the products query scanned all of product_prices."], "");
        assert_eq!(said.new_in(&whole).unwrap().facts, whole.facts);
    }
}
