//! One claimed job, start to finish. `prepare` does the slow, cancellable
//! part (load, prompt, provider, parse) and holds no transaction; `finish`
//! records the outcome through the state machine: the completion
//! transaction, a later attempt, or failure.
//!
//! One call per turn: the turn's last observation job, started after the
//! Stop, asks for the observations and the turn's summary together (see
//! `load`); an answer without a summary gets the heuristic's. The turn's
//! turn_summary job then completes without a call and without rows.

pub mod load;
pub mod observe;
pub mod spans;
pub mod write;

use cairn_shared::jobs::{
    JobType,
    state_machine::{self, ClaimedJob, Transition, TransitionError},
};
use chrono::{DateTime, Utc};

use crate::generation::{
    Generator,
    notices::JobChanged,
    parse::{self, Parsed, ParsedSummary},
    prompt,
    provider::{ErrorClass, ProviderError, Request, Usage, heuristic},
    retry::Decision,
};

/// What an attempt produced, before anything is written.
pub struct Prepared {
    pub job_type: JobType,
    pub result: Result<Parsed, ProviderError>,
    /// Known when the provider answered (even with unreadable output).
    pub usage: Option<Usage>,
    /// An observation job that took its turn's summary: the heuristic's
    /// summary, written if the job fails for good, so the turn keeps one.
    pub fallback_summary: Option<ParsedSummary>,
    /// The lines and edits of the job's files.
    pub code: spans::TurnCode,
}

/// How an attempt ended, for logs and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    Completed {
        rows: usize,
    },
    Retrying,
    Failed,
    /// The claim was lost (rescued or cancelled): nothing was written.
    Refused,
    /// The database failed; the lease will expire and the job be rescued.
    Abandoned,
}

/// What a caught panic said.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

impl Prepared {
    /// The attempt panicked: a bug, so the job fails with what the panic said.
    pub fn panicked(job: &ClaimedJob, panic: Box<dyn std::any::Any + Send>) -> Self {
        let what = panic_message(panic.as_ref());
        tracing::error!(job_id = %job.id, panic = %what, "job attempt panicked");
        Prepared {
            job_type: load::job_type(job),
            result: Err(ProviderError::new(
                ErrorClass::Unrecoverable,
                format!("internal error: {what}"),
            )),
            usage: None,
            fallback_summary: None,
            code: spans::TurnCode::default(),
        }
    }
}

pub async fn prepare(ctx: &Generator, job: &ClaimedJob) -> Prepared {
    let span = observe::span(job, "prepare");
    tracing::Instrument::instrument(prepare_in_span(ctx, job), span).await
}

async fn prepare_in_span(ctx: &Generator, job: &ClaimedJob) -> Prepared {
    let job_type = load::job_type(job);
    let loaded = match load::load(&ctx.pool, job).await {
        Ok(loaded) => loaded,
        Err(e) => {
            return Prepared {
                job_type,
                result: Err(ProviderError::new(
                    ErrorClass::Transient,
                    format!("loading the job's events: {e}"),
                )),
                usage: None,
                fallback_summary: None,
                code: spans::TurnCode::default(),
            };
        }
    };
    if loaded.summary_elsewhere {
        // The turn's last observation job writes this turn's summary: no
        // call, no rows, no usage (a usage without a provider).
        return Prepared {
            job_type,
            result: Ok(Parsed::default()),
            usage: Some(Usage::default()),
            fallback_summary: None,
            code: spans::TurnCode::default(),
        };
    }
    let material = &loaded.material;
    // Only observations cite lines of code.
    let code = match job_type {
        JobType::Observations => spans::TurnCode::of(material),
        JobType::TurnSummary | JobType::SessionSummary => spans::TurnCode::default(),
    };
    // Past 80 % of a budget turn summaries are the heuristic's: the model
    // is then asked for the observations only.
    let model_summarises = loaded.summarise_turn && !budget_degraded(ctx, job).await;
    let options = prompt::Options {
        style: prompt::Style::for_provider(ctx.provider.name()),
        summarise_turn: model_summarises,
        turn_summaries: &loaded.turn_summaries,
    };
    let prompt = prompt::build_with(material, &ctx.settings.budget, &options);
    let fallback_summary = loaded
        .summarise_turn
        .then(|| parse::parse(&heuristic::turn_summary(material)).ok()?.summary)
        .flatten();
    let request = Request {
        system: prompt.system,
        user: &prompt.user,
        material,
        summarise_turn: model_summarises,
        max_output_tokens: ctx.settings.max_output_tokens,
    };
    let called =
        tracing::Instrument::instrument(ctx.provider.complete(request), observe::provider_span(ctx)).await;
    observe::provider_call(ctx.provider.name(), &called);
    match called {
        Ok(mut completion) => Prepared {
            job_type,
            result: parse::parse(&completion.text)
                .and_then(|parsed| fits(job_type, loaded.summarise_turn, parsed))
                .map(|parsed| with_turn_summary(parsed, &loaded, model_summarises)),
            usage: Some({
                // Stored as text and in jsonb, neither of which takes U+0000.
                completion.usage.model.retain(|c| c != '\0');
                completion.usage
            }),
            fallback_summary,
            code,
        },
        Err(e) => Prepared {
            job_type,
            result: Err(e),
            usage: None,
            fallback_summary,
            code,
        },
    }
}

/// Whether the job's project or team is past 80 % (not 100 %) of a daily
/// budget; unreadable budgets count as not (the guard fails open too).
async fn budget_degraded(ctx: &Generator, job: &ClaimedJob) -> bool {
    if ctx.provider.name() == "heuristic" {
        return false;
    }
    match crate::store::usage::job_today(&ctx.pool, job.id).await {
        Ok(Some(today)) => today.applies() && today.state() == crate::generation::budget::State::Degraded,
        _ => false,
    }
}

/// An observation job that writes its turn's summary gets the heuristic's
/// when the model was not asked for one (`model_summarised` false: past 80 %
/// of a budget) or left it out; any other observation job writes no
/// summary, whatever the model added.
fn with_turn_summary(mut parsed: Parsed, loaded: &load::Loaded, model_summarised: bool) -> Parsed {
    if loaded.material.job_type != JobType::Observations {
        return parsed;
    }
    if !loaded.summarise_turn {
        parsed.summary = None;
    } else if !model_summarised || parsed.summary.is_none() {
        let text = heuristic::turn_summary(&loaded.material);
        parsed.summary = parse::parse(&text).ok().and_then(|p| p.summary);
        parsed.summary_by_heuristic = parsed.summary.is_some();
    }
    parsed
}

/// A readable answer of the wrong kind (a summary job answered with
/// observations only) is unreadable for this job. An observation job that
/// also summarises its turn may answer with either.
fn fits(job_type: JobType, summarise_turn: bool, parsed: Parsed) -> Result<Parsed, ProviderError> {
    let usable = parsed.skipped.is_some()
        || match job_type {
            JobType::Observations => {
                !parsed.observations.is_empty() || (summarise_turn && parsed.summary.is_some())
            }
            JobType::TurnSummary | JobType::SessionSummary => parsed.summary.is_some(),
        };
    if usable {
        Ok(parsed)
    } else {
        Err(ProviderError::new(
            ErrorClass::ParseError,
            format!(
                "the answer holds no {} and no <skip_summary/>",
                expected(job_type)
            ),
        ))
    }
}

fn expected(job_type: JobType) -> &'static str {
    match job_type {
        JobType::Observations => "<observation>",
        JobType::TurnSummary | JobType::SessionSummary => "<summary>",
    }
}

pub async fn finish(ctx: &Generator, job: &ClaimedJob, worker: &str, prepared: Prepared) -> Finished {
    let span = observe::span(job, "finish");
    let finished = tracing::Instrument::instrument(finish_in_span(ctx, job, worker, prepared), span).await;
    observe::finished(ctx, job, finished);
    finished
}

async fn finish_in_span(ctx: &Generator, job: &ClaimedJob, worker: &str, prepared: Prepared) -> Finished {
    let usage = prepared.usage.unwrap_or_else(|| Usage {
        provider: ctx.provider.name().into(),
        model: ctx.provider.model().into(),
        ..Usage::default()
    });
    let outcome = match &prepared.result {
        Ok(parsed) => {
            match write::complete_embedded(
                &ctx.pool,
                ctx.embedder.as_ref(),
                job,
                prepared.job_type,
                worker,
                parsed,
                &usage,
                &prepared.code,
            )
            .await
            {
                Ok(notices) => {
                    ctx.notices.published(&notices).await;
                    Ok(Finished::Completed { rows: notices.len() })
                }
                Err(e) => Err(e),
            }
        }
        Err(error) => {
            record_failure(
                ctx,
                job,
                worker,
                error,
                &usage,
                prepared.fallback_summary.as_ref(),
            )
            .await
        }
    };
    let finished = match outcome {
        Ok(finished) => finished,
        Err(TransitionError::Refused { found, .. }) => {
            tracing::warn!(job_id = %job.id, ?found, worker, "claim lost before the job finished; nothing written");
            Finished::Refused
        }
        Err(TransitionError::Database(e)) => {
            tracing::error!(job_id = %job.id, error = %e, "could not record the job's outcome; its lease will expire");
            Finished::Abandoned
        }
    };
    let status = match finished {
        Finished::Completed { .. } => Some("completed"),
        Finished::Retrying => Some("queued"),
        Finished::Failed => Some("failed"),
        Finished::Refused | Finished::Abandoned => None,
    };
    if let Some(status) = status {
        let notice = JobChanged::new(job.id, job.project_id, status, prepared.job_type);
        ctx.notices.job_changed(&notice).await;
    }
    finished
}

/// When a retry `delay` from `now` falls due; never overflows (a delay
/// past what a timestamp can hold is an hour).
fn retry_at(now: DateTime<Utc>, delay: std::time::Duration) -> DateTime<Utc> {
    let hour = chrono::Duration::hours(1);
    chrono::Duration::from_std(delay)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(now + hour)
}

/// The job's attempt panicked outside `prepare` (while recording its
/// outcome, say): fail it through the state machine, as a panic in
/// `prepare` does. Refused when the outcome was recorded before the panic.
pub async fn fail_panicked(ctx: &Generator, job: &ClaimedJob, worker: &str, what: &str) -> Finished {
    let message = format!("unrecoverable: internal error: {what}").replace('\0', "");
    let result = async {
        let mut conn = ctx.pool.acquire().await?;
        let transition = Transition::Fail {
            worker,
            error: &message,
            usage: None,
        };
        state_machine::apply(&mut conn, job.project_id, job.id, transition).await
    }
    .await;
    match result {
        Ok(_) => {
            let notice = JobChanged::new(job.id, job.project_id, "failed", load::job_type(job));
            ctx.notices.job_changed(&notice).await;
            Finished::Failed
        }
        Err(TransitionError::Refused { found, .. }) => {
            tracing::warn!(job_id = %job.id, ?found, "panicked job was already settled or lost");
            Finished::Refused
        }
        Err(TransitionError::Database(e)) => {
            tracing::error!(job_id = %job.id, error = %e, "could not fail the panicked job; its lease will expire");
            Finished::Abandoned
        }
    }
}

async fn record_failure(
    ctx: &Generator,
    job: &ClaimedJob,
    worker: &str,
    error: &ProviderError,
    usage: &Usage,
    fallback_summary: Option<&ParsedSummary>,
) -> Result<Finished, TransitionError> {
    let usage = serde_json::to_value(usage).ok();
    // A provider's message may quote anything, U+0000 included, which Postgres refuses.
    let message = format!("{error}").replace('\0', "");
    let mut conn = ctx.pool.acquire().await?;
    match ctx.settings.retry.decide(error, job.attempts, job.max_attempts) {
        Decision::RetryIn(delay) => {
            let at = retry_at(Utc::now(), delay);
            tracing::info!(job_id = %job.id, attempt = job.attempts, %error, retry_at = %at, "job will be retried");
            let transition = Transition::RetryLater {
                worker,
                at,
                error: &message,
                usage: usage.as_ref(),
            };
            state_machine::apply(&mut conn, job.project_id, job.id, transition).await?;
            Ok(Finished::Retrying)
        }
        Decision::Fail => {
            tracing::warn!(job_id = %job.id, attempt = job.attempts, %error, "job failed");
            let transition = Transition::Fail {
                worker,
                error: &message,
                usage: usage.as_ref(),
            };
            // The turn's summary was this job's to write: the turn keeps the heuristic's.
            let writes = fallback_summary
                .map(|summary| write::failed_turn_summary(job, summary))
                .unwrap_or_default();
            state_machine::apply_with(&mut conn, job.project_id, job.id, transition, writes).await?;
            Ok(Finished::Failed)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::{TimeZone, Utc};

    use super::retry_at;

    #[test]
    fn retry_times_never_overflow() {
        let now = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        assert_eq!(
            retry_at(now, Duration::from_secs(60)),
            now + chrono::Duration::minutes(1)
        );
        for absurd in [Duration::from_secs(99_999_999_999_999), Duration::MAX] {
            assert_eq!(retry_at(now, absurd), now + chrono::Duration::hours(1));
        }
    }
}
