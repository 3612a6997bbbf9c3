//! Memories related to a prompt, answered on UserPromptSubmit (on unless a
//! project turns it off): the retrieval engine's best few matches of the
//! prompt, behind a relevance gate (`admits`) so that an unrelated prompt
//! gets nothing, in a small token budget, and only if they arrive within
//! the latency budget — a late answer is worse than none.

use std::time::Duration;

use uuid::Uuid;

use super::{gather, markdown};
use crate::state::AppState;

pub async fn related(state: &AppState, project_id: Uuid, prompt: &str, deadline: Duration) -> Option<String> {
    match tokio::time::timeout(deadline, lookup(state, project_id, prompt)).await {
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

async fn lookup(state: &AppState, project_id: Uuid, prompt: &str) -> crate::error::ApiResult<Option<String>> {
    let Some(settings) = gather::settings(&state.pool, project_id).await? else {
        return Ok(None);
    };
    if !settings.prompt_context {
        return Ok(None);
    }
    let matches: Vec<gather::ObservationItem> =
        gather::relevant_scored(state, project_id, prompt, None, gather::DETAILED as usize, true)
            .await?
            .into_iter()
            .filter(|(_, hit)| admits(hit))
            .map(|(o, _)| o)
            .collect();
    Ok(render(&matches, settings.prompt_context_budget_tokens as usize))
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
    static GATE: std::sync::LazyLock<f32> = std::sync::LazyLock::new(|| {
        std::env::var("CAIRN_PROMPT_GATE_COSINE")
            .ok()
            .and_then(|v| v.parse::<f32>().ok())
            .filter(|g| (0.0..1.0).contains(g))
            .unwrap_or(GATE_COSINE)
    });
    *GATE
}

/// The gate by words: at least this many of the prompt's terms…
pub const GATE_MATCHED_TERMS: u16 = 2;
/// …and at least this share of them (stop words never count).
pub const GATE_TERM_SHARE: f32 = 0.5;

/// Whether a hit is related enough to be injected unasked: close in
/// meaning, or holding most of the prompt's words.
pub fn admits(hit: &cairn_retrieval::Hit) -> bool {
    hit.cosine >= gate_cosine()
        || (hit.matched >= GATE_MATCHED_TERMS && hit.matched as f32 >= GATE_TERM_SHARE * hit.terms as f32)
}

/// The matches, each cut so that the whole stays within `budget_tokens`.
pub fn render(matches: &[gather::ObservationItem], budget_tokens: usize) -> Option<String> {
    render_titled("# Related memory (Cairn)", matches, budget_tokens)
}

/// [`render`] under another heading.
pub fn render_titled(
    title: &str,
    matches: &[gather::ObservationItem],
    budget_tokens: usize,
) -> Option<String> {
    if matches.is_empty() {
        return None;
    }
    let head = format!("{title}\n{}", markdown::DATA_NOTICE);
    let frame = markdown::OPEN_TAG.len() + head.chars().count() + markdown::CLOSE_TAG.len();
    let mut left = (budget_tokens * 4).saturating_sub(frame);
    let share = left / matches.len();
    let mut out = format!("{}{head}", markdown::OPEN_TAG);
    let mut shown = 0;
    for o in matches {
        let block = markdown::detail(o, share.min(left));
        let price = block.chars().count();
        if price > left || block.lines().count() < 1 {
            break;
        }
        left -= price;
        out.push_str(&block);
        shown += 1;
    }
    if shown == 0 {
        return None;
    }
    out.push_str(markdown::CLOSE_TAG);
    Some(out)
}
