//! What a job tells telemetry: its span (continuing the trace of the
//! request that created it), the provider call's span and counters, and the
//! claim-to-outcome latency.

use cairn_shared::jobs::state_machine::ClaimedJob;
use cairn_telemetry::names;
use chrono::Utc;

use super::Finished;
use crate::generation::{
    Generator,
    provider::{Completion, ProviderError},
};

/// The span of one phase (`prepare`, `finish`) of a job, a child of the
/// ingest request's span when that request was traced.
/// The trace context came with the claim: no query.
pub fn span(job: &ClaimedJob, phase: &'static str) -> tracing::Span {
    let span =
        tracing::info_span!("job", job_id = %job.id, job_type = %job.job_type, attempt = job.attempts, phase);
    if let Some(traceparent) = &job.traceparent {
        cairn_telemetry::otel::continue_trace(&span, traceparent);
    }
    span
}

/// The span of one provider call.
pub fn provider_span(ctx: &Generator) -> tracing::Span {
    tracing::info_span!(
        "provider.complete",
        provider = ctx.provider.name(),
        model = ctx.provider.model()
    )
}

/// Counts one provider call by outcome (`ok` or its error class) and its tokens.
pub fn provider_call(provider: &str, called: &Result<Completion, ProviderError>) {
    let provider = provider.to_owned();
    let outcome = match called {
        Ok(_) => "ok",
        Err(e) => e.class.as_str(),
    };
    metrics::counter!(names::PROVIDER_CALLS, "provider" => provider.clone(), "outcome" => outcome)
        .increment(1);
    if let Ok(completion) = called {
        let usage = &completion.usage;
        for (kind, n) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
            ("cached", usage.cached_tokens),
        ] {
            metrics::counter!(names::PROVIDER_TOKENS, "provider" => provider.clone(), "kind" => kind)
                .increment(n);
        }
    }
}

/// Records the time from claim to the attempt's outcome.
pub fn finished(ctx: &Generator, job: &ClaimedJob, finished: Finished) {
    let outcome = match finished {
        Finished::Completed { .. } => "completed",
        Finished::Retrying => "retrying",
        Finished::Failed => "failed",
        Finished::Refused => "refused",
        Finished::Abandoned => "abandoned",
    };
    // The claim set the lease to claim time + lease; the struct keeps that first lease.
    let claimed_at = job.lease_expires_at - ctx.settings.lease;
    let seconds = (Utc::now() - claimed_at).num_milliseconds().max(0) as f64 / 1000.0;
    metrics::histogram!(names::JOB_DURATION, "job_type" => job.job_type.as_str(), "outcome" => outcome)
        .record(seconds);
}
