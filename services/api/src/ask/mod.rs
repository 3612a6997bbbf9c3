//! Ask: a question answered from the project's best memories. The question
//! is searched like any query (hybrid when the server has embeddings); a
//! model, when one is configured, answers from those memories only and
//! cites them (`prompt`); the citations are checked against what was given,
//! so an answer never cites a memory of another project. With the offline
//! `heuristic` provider, with the project's daily token budget spent, or
//! when the model fails or is too slow, the answer is the memories
//! themselves. A model's tokens count against the project's budget.

pub mod memory;
pub mod prompt;

use std::time::{Duration, Instant};

use cairn_core::generation::{
    material::Material,
    provider::{Provider, Request},
};
use cairn_shared::jobs::JobType;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::{
    error::{ApiError, ApiResult},
    search::{self, Filters, Order, SearchRequest},
    state::AppState,
    store::usage,
};
use memory::Memory;

/// Characters a question may have.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// Memories given to the model unless asked (`limit`).
pub const DEFAULT_LIMIT: i64 = 8;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    pub id: Uuid,
    /// `observation` or `summary`.
    pub source: &'static str,
    pub title: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskUsage {
    pub provider: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub answer: String,
    /// False when memory holds nothing on the question.
    pub known: bool,
    /// `llm` (a model's answer) or `memories` (the memories themselves).
    pub answered_by: &'static str,
    /// The memories the answer rests on, in the answer's order: only ids of
    /// the memories it was given, all of the asking project.
    pub citations: Vec<Citation>,
    /// The model call's tokens; absent when no model was called.
    pub usage: Option<AskUsage>,
    /// Why a configured model did not answer (budget spent, an error, the deadline).
    pub fallback: Option<String>,
}

/// Answers `question` from the project's memories (at most `limit`, 1..=20).
pub async fn ask(
    state: &AppState,
    team_id: Uuid,
    project_id: Uuid,
    question: &str,
    limit: i64,
    viewer: cairn_core::tenancy::Viewer,
) -> ApiResult<Answer> {
    let question = question.trim();
    if question.is_empty() || question.chars().count() > MAX_QUESTION_CHARS {
        return Err(ApiError::unprocessable(
            "invalid_field",
            format!("`question` is 1 to {MAX_QUESTION_CHARS} characters"),
        ));
    }
    if !(1..=20).contains(&limit) {
        return Err(ApiError::unprocessable("invalid_field", "`limit` is 1..=20"));
    }
    let page = search::search(
        state,
        &SearchRequest {
            project_id,
            query: Some(question.to_string()),
            filters: Filters {
                viewer,
                ..Filters::default()
            },
            include_summaries: true,
            order: Order::Relevance,
            limit,
            cursor: None,
            mode: None,
            as_of: None,
        },
    )
    .await?;
    let memories: Vec<Memory> = page.hits.into_iter().map(Memory::from).collect();
    if memories.is_empty() {
        return Ok(Answer {
            answer: prompt::DOES_NOT_KNOW.into(),
            known: false,
            answered_by: "memories",
            citations: vec![],
            usage: None,
            fallback: None,
        });
    }
    let provider = &state.ask_provider;
    if provider.name() == "heuristic" {
        return Ok(verbatim(&memories, None));
    }
    let today = usage::project_today(&state.pool, team_id, project_id).await?;
    if today.is_some_and(|t| t.applies() && t.state() == usage::State::Exhausted) {
        return Ok(verbatim(&memories, Some("daily token budget exhausted".into())));
    }
    match call(provider.as_ref(), question, &memories, state.config.ask_deadline).await {
        Ok((text, used)) => {
            usage::add_call(
                &state.pool,
                team_id,
                project_id,
                used.input_tokens as i64,
                used.output_tokens as i64,
            )
            .await?;
            let cited = prompt::citations(&text, &memories);
            Ok(Answer {
                known: !prompt::does_not_know(&text),
                answer: text.trim().to_string(),
                answered_by: "llm",
                citations: citations(&memories, &cited),
                usage: Some(used),
                fallback: None,
            })
        }
        Err(why) => {
            tracing::warn!(%project_id, reason = %why, "ask: the model did not answer; giving the memories");
            Ok(verbatim(&memories, Some(why)))
        }
    }
}

/// One model call within `deadline`; the reason when it fails.
async fn call(
    provider: &dyn Provider,
    question: &str,
    memories: &[Memory],
    deadline: Duration,
) -> Result<(String, AskUsage), String> {
    let user = prompt::user(question, memories);
    let material = Material {
        job_id: Uuid::nil(),
        job_type: JobType::Observations,
        project: String::new(),
        agent: None,
        cwd: None,
        prompt_number: None,
        events: vec![],
    };
    let request = Request {
        system: prompt::SYSTEM,
        user: &user,
        material: &material,
        summarise_turn: false,
        max_output_tokens: prompt::MAX_OUTPUT_TOKENS,
    };
    let started = Instant::now();
    match tokio::time::timeout(deadline, provider.complete(request)).await {
        Err(_) => Err(format!(
            "the model did not answer within {} ms",
            deadline.as_millis()
        )),
        Ok(Err(e)) => Err(format!("the model failed: {e}")),
        Ok(Ok(c)) if c.text.trim().is_empty() => Err("the model's answer was empty".into()),
        Ok(Ok(c)) => Ok((
            c.text,
            AskUsage {
                provider: c.usage.provider,
                model: c.usage.model,
                input_tokens: c.usage.input_tokens,
                output_tokens: c.usage.output_tokens,
                latency_ms: started.elapsed().as_millis() as u64,
            },
        )),
    }
}

fn citations(memories: &[Memory], ids: &[Uuid]) -> Vec<Citation> {
    ids.iter()
        .filter_map(|id| memories.iter().find(|m| m.id == *id))
        .map(|m| Citation {
            id: m.id,
            source: m.source,
            title: m.title.clone(),
        })
        .collect()
}

/// The memories themselves, best first, each cited.
fn verbatim(memories: &[Memory], fallback: Option<String>) -> Answer {
    let ids: Vec<Uuid> = memories.iter().map(|m| m.id).collect();
    Answer {
        answer: prompt::verbatim(memories),
        known: true,
        answered_by: "memories",
        citations: citations(memories, &ids),
        usage: None,
        fallback,
    }
}
