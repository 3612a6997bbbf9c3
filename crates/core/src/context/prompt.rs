//! Memories related to a prompt, answered on UserPromptSubmit (on unless a
//! project turns it off): the retrieval engine's best few matches of the
//! prompt, behind a relevance gate (`admits`) so that an unrelated prompt
//! gets nothing, in a small token budget, and only if they arrive within
//! the latency budget — a late answer is worse than none.

use crate::tenancy::Viewer;
use std::{sync::LazyLock, time::Duration};

use cairn_retrieval::knob::f32_env;

use uuid::Uuid;

use super::focus::Focus;
use super::once::Said;
use super::{gather, markdown};
use crate::engine::Engine;

pub async fn related(
    state: &Engine,
    project_id: Uuid,
    prompt: &str,
    deadline: Duration,
    viewer: Viewer,
) -> Option<String> {
    match tokio::time::timeout(deadline, lookup(state, project_id, prompt, viewer)).await {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => {
            tracing::warn!(error = ?e, "related memories failed; answering without them");
            None
        }
        Err(_) => {
            tracing::info!(
                ?deadline,
                "related memories missed their deadline; answering without them"
            );
            None
        }
    }
}

async fn lookup(
    state: &Engine,
    project_id: Uuid,
    prompt: &str,
    viewer: Viewer,
) -> crate::error::Result<Option<String>> {
    let Some(settings) = gather::settings(&state.pool, project_id).await? else {
        return Ok(None);
    };
    if !settings.prompt_context {
        return Ok(None);
    }
    // The project's switch from the primary; the memories from the read pool.
    let found = gather::relevant_scored(
        state,
        &state.read_pool,
        project_id,
        prompt,
        None,
        GATE_FIELD,
        true,
        viewer,
    )
    .await?;
    let matches = admitted(found, gather::DETAILED as usize);
    Ok(render(
        &matches,
        settings.prompt_context_budget_tokens as usize,
        &Focus::of(prompt),
    ))
}

/// The gate's cosine floor. all-MiniLM-L6-v2 put the `prompt_gate` test's
/// unrelated prompts at 0.20–0.25 from every memory; on the recall
/// benchmark's tune set (full profile) a floor of 0.45 let 0.245 of the
/// questions' facts through on the prompt, 0.35 let 0.327, 0.30 let 0.388
/// (bench/README.md). 0.35 keeps 0.1 above the unrelated prompts.
pub const GATE_COSINE: f32 = 0.35;
/// [`GATE_COSINE`], or `CAIRN_PROMPT_GATE_COSINE` (0..1) when set: the
/// knob the tune set is swept with.
pub fn gate_cosine() -> f32 {
    static GATE: LazyLock<f32> = LazyLock::new(|| f32_env("CAIRN_PROMPT_GATE_COSINE", GATE_COSINE, 0.0..1.0));
    *GATE
}

/// The gate by words: at least this many of the prompt's terms…
pub const GATE_MATCHED_TERMS: u16 = 2;
/// …and at least this share of them (stop words never count).
pub const GATE_TERM_SHARE: f32 = 0.5;

/// The gate by standing out: a memory below [`GATE_COSINE`] but at least
/// this close in meaning…
pub const GATE_STANDOUT_COSINE: f32 = 0.27;
/// …passes when it is this much closer than the least close of the
/// [`GATE_FIELD`] best matches. An unrelated prompt is about equally far
/// from everything; a paraphrased question is near its answer and far
/// from the rest. Tuned on the recall benchmark's tune set (full profile:
/// facts reaching the agent 0.449 → 0.490); a plain floor of 0.27 reaches
/// as many but lets an unrelated prompt of the `prompt_gate` test through.
pub const GATE_STANDOUT_MARGIN: f32 = 0.05;
/// The best matches the standout rule compares.
pub const GATE_FIELD: usize = 5;

/// ([`GATE_STANDOUT_COSINE`], [`GATE_STANDOUT_MARGIN`], words), or
/// `CAIRN_PROMPT_GATE_STANDOUT_COSINE`, `_MARGIN` (0..1) and `_WORDS` (the
/// prompt's terms a standout must hold, 0..=8; 0 when unset) when set: the
/// knobs the tune set is swept with.
pub fn gate_standout() -> (f32, f32, f32) {
    static STANDOUT: LazyLock<(f32, f32, f32)> = LazyLock::new(|| {
        (
            f32_env(
                "CAIRN_PROMPT_GATE_STANDOUT_COSINE",
                GATE_STANDOUT_COSINE,
                0.0..1.0,
            ),
            f32_env(
                "CAIRN_PROMPT_GATE_STANDOUT_MARGIN",
                GATE_STANDOUT_MARGIN,
                0.0..1.0,
            ),
            f32_env("CAIRN_PROMPT_GATE_STANDOUT_WORDS", 0.0, 0.0..=8.0),
        )
    });
    *STANDOUT
}

/// Whether a hit is related enough to be injected unasked: close in
/// meaning, or holding most of the prompt's words.
pub fn admits(hit: &cairn_retrieval::Hit) -> bool {
    hit.cosine >= gate_cosine()
        || (hit.matched >= GATE_MATCHED_TERMS && hit.matched as f32 >= GATE_TERM_SHARE * hit.terms as f32)
}

/// Of `found` (the engine's best matches, best first), the first `want`
/// that pass the gate: [`admits`], or standing out from the field.
pub fn admitted<T>(found: Vec<(T, cairn_retrieval::Hit)>, want: usize) -> Vec<T> {
    let least = found.iter().map(|(_, h)| h.cosine).fold(f32::INFINITY, f32::min);
    let full_field = found.len() >= GATE_FIELD;
    let (standout_cosine, standout_margin, standout_words) = gate_standout();
    found
        .into_iter()
        .take(want)
        .filter(|(_, hit)| {
            let pass = admits(hit)
                || (full_field
                    && hit.cosine >= standout_cosine
                    && hit.cosine - least >= standout_margin
                    && f32::from(hit.matched) >= standout_words);
            tracing::debug!(
                pass,
                cosine = hit.cosine,
                least,
                matched = hit.matched,
                terms = hit.terms,
                bm25 = hit.bm25,
                "prompt gate"
            );
            pass
        })
        .map(|(o, _)| o)
        .collect()
}

/// The matches, each cut so that the whole stays within `budget_tokens`,
/// what `focus` asks about first in each (`focus`), each fact said once
/// (`once`).
pub fn render(matches: &[gather::ObservationItem], budget_tokens: usize, focus: &Focus) -> Option<String> {
    render_titled("# Related memory (Cairn)", matches, budget_tokens, focus)
}

/// [`render`] under another heading.
pub fn render_titled(
    title: &str,
    matches: &[gather::ObservationItem],
    budget_tokens: usize,
    focus: &Focus,
) -> Option<String> {
    if matches.is_empty() {
        return None;
    }
    let head = format!("{title}\n{}", markdown::DATA_NOTICE);
    let frame = markdown::OPEN_TAG.len() + head.chars().count() + markdown::CLOSE_TAG.len();
    let mut left = (budget_tokens * 4).saturating_sub(frame);
    let mut out = format!("{}{head}", markdown::OPEN_TAG);
    let mut shown = 0;
    let mut said = Said::default();
    for (i, o) in matches.iter().enumerate() {
        let Some(o) = said.new_in(o) else { continue };
        // An equal part of what is left: room a memory left out or shorter
        // than its part did not use goes to those after it.
        let share = left / (matches.len() - i);
        // The heading line takes about a third of a block's share.
        let focused = focus.apply(&o, share * 2 / 3);
        let block = markdown::detail(&focused, share.min(left));
        let price = block.chars().count();
        if price > left || block.lines().count() < 1 {
            break;
        }
        left -= price;
        out.push_str(&block);
        said.add(&focused);
        shown += 1;
    }
    if shown == 0 {
        return None;
    }
    out.push_str(markdown::CLOSE_TAG);
    Some(out)
}

#[cfg(test)]
mod tests {
    use cairn_retrieval::{Hit, Source};

    use super::*;

    fn hit(cosine: f32) -> Hit {
        Hit {
            source: Source::Observation,
            id: uuid::Uuid::nil(),
            score: cosine as f64,
            created_at: chrono::Utc::now(),
            bm25: 0.0,
            cosine,
            matched: 0,
            terms: 6,
        }
    }

    fn gate(cosines: &[f32]) -> Vec<usize> {
        admitted(cosines.iter().enumerate().map(|(i, c)| (i, hit(*c))).collect(), 3)
    }

    #[test]
    fn a_close_match_passes_and_a_standout_passes_below_the_floor() {
        assert_eq!(gate(&[0.40, 0.30, 0.26, 0.25, 0.24]), [0, 1]);
        // Everything about equally far: nothing, however many.
        assert_eq!(gate(&[0.29, 0.28, 0.28, 0.27, 0.27]), Vec::<usize>::new());
        // Below the standout floor, whatever the margin.
        assert_eq!(gate(&[0.26, 0.10, 0.10, 0.10, 0.10]), Vec::<usize>::new());
        // Too few matches to call one a standout.
        assert_eq!(gate(&[0.30, 0.20]), Vec::<usize>::new());
        // Words alone still pass.
        let mut worded = hit(0.0);
        worded.matched = 4;
        assert_eq!(admitted(vec![(7, worded)], 3), [7]);
    }
}
