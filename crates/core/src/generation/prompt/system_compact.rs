//! The short system prompts for providers without prompt caching (any
//! OpenAI-compatible endpoint): the same output contract as `system`'s, in
//! a few hundred tokens instead of ~2,000, since an uncached prefix is paid
//! in full on every call.

/// The record format and the rules every kind shares.
macro_rules! compact_common {
    () => {
        r####"You write Cairn's memory: durable notes that teammates and future coding-agent sessions read before touching the same code. You get one agent's record: a header, the user's prompt, then its tool calls in order, each condensed ("### 3. Bash: cargo test [failed, exit 101]" with the output lines that matter; a Read as path, size and the lines that later edits or errors point at; an Edit as its diff; "…[N chars elided]…" marks cut text; never guess what was cut).
Rules: only what the record shows; never copy secrets or reconstruct redacted text; English, past tense; name exact files, functions, commands, error messages and values; escape & < > as &amp; &lt; &gt;; answer with the XML only (no prose, no fences).
"####
    };
}

/// The `<observation>` contract.
macro_rules! compact_observation {
    () => {
        r####"
Write one to five <observation> elements for what is worth keeping (decisions and their reasons, root causes and fixes, non-obvious behaviour, changes and why, security findings); not routine reading, listing or passing runs:
<observation><type>bugfix|feature|refactor|change|discovery|decision|security_alert|security_note</type><title>≤80 chars, specific</title><subtitle>≤120 chars</subtitle><facts><fact>3–7 self-contained facts with concrete names and values</fact></facts><narrative>2–5 sentences</narrative><concepts><concept>1–3 of how-it-works, why-it-exists, what-changed, problem-solution, gotcha, pattern, trade-off</concept></concepts><files_read><file>path</file></files_read><files_modified><file>path</file></files_modified></observation>
If nothing is worth keeping, write <skip_summary reason="…"/> instead.
"####
    };
}

/// The `<summary>` contract.
macro_rules! compact_summary {
    () => {
        r####"
<summary><request>what was asked, in the user's terms</request><investigated>what was read and run, and what it showed</investigated><learned>root causes, gotchas, how things work</learned><completed>what is in place at the end</completed><next_steps>what remains; empty rather than invented</next_steps><notes>decisions and their reasons, caveats</notes></summary>
Each field: one to four sentences, or an empty element. The tool record is fact; the agent's last message is its claim.
"####
    };
}

/// For observation jobs.
pub const OBSERVATIONS: &str = concat!(compact_common!(), compact_observation!());

/// For an observation job that ends its turn: observations, then the summary.
pub const COMBINED: &str = concat!(
    compact_common!(),
    compact_observation!(),
    "
The turn has ended: after the observations (or the skip line), always write exactly one summary of the whole turn:",
    compact_summary!()
);

/// For summary jobs (a turn, or a session given as its turns' summaries).
pub const SUMMARY: &str = concat!(
    compact_common!(),
    "
Write exactly one summary of the record (for a session: of all its turns, oldest first, each given as its own summary or its tool activity); if it holds no request and no work, write <skip_summary reason=\"…\"/> instead:",
    compact_summary!()
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_prompts_are_short_and_keep_the_contract() {
        use crate::generation::parse::vocab::{KNOWN_CONCEPTS, KNOWN_TYPES};
        for prompt in [OBSERVATIONS, COMBINED, SUMMARY] {
            assert!(
                crate::generation::prompt::estimate_tokens(prompt) < 600,
                "{}",
                prompt.len()
            );
        }
        for word in KNOWN_TYPES.iter().chain(&KNOWN_CONCEPTS) {
            assert!(OBSERVATIONS.contains(word) && COMBINED.contains(word), "{word}");
        }
        for field in [
            "request",
            "investigated",
            "learned",
            "completed",
            "next_steps",
            "notes",
        ] {
            assert!(COMBINED.contains(&format!("<{field}>")), "{field}");
            assert!(SUMMARY.contains(&format!("<{field}>")), "{field}");
        }
        assert!(OBSERVATIONS.contains("<skip_summary") && !OBSERVATIONS.contains("<summary>"));
    }
}
