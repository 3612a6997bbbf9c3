//! Embeddings of what a job writes, and of what was written without one.
//!
//! `for_parsed` embeds a job's observations or summary before the
//! completion statement (the model never holds a transaction open), which
//! writes each vector beside its row (`job::write`); `store::embeddings`
//! writes them for `backfill`. A failure to
//! embed never fails a job: the rows are written without vectors (logged),
//! and `backfill` embeds rows without a vector later, in bounded batches.
//! It also re-reads vectors the same model made under an older reading
//! (`cairn_embed::local::READING`), so an upgrade that reads texts further
//! reaches the memories written before it.

use cairn_embed::Embedder;
use cairn_shared::jobs::JobType;
use sqlx::PgPool;
use uuid::Uuid;

use crate::generation::parse::{Parsed, ParsedObservation, ParsedSummary};
use crate::store::embeddings::{self, Missing};

/// The vectors of one job's rows, by position; `None` where there is none.
#[derive(Clone, Debug, Default)]
pub struct Vectors {
    pub model: String,
    /// How the model read the texts (`Embedder::reading`).
    pub reading: i16,
    pub observations: Vec<Option<Vec<f32>>>,
    pub summary: Option<Vec<f32>>,
}

impl Vectors {
    pub fn observation(&self, position: usize) -> Option<&[f32]> {
        self.observations.get(position).and_then(|v| v.as_deref())
    }
}

/// The text an observation is embedded from: its title, subtitle, facts and narrative.
pub fn observation_text(title: &str, subtitle: &str, facts: &[String], narrative: &str) -> String {
    let mut parts = vec![title, subtitle];
    parts.extend(facts.iter().map(String::as_str));
    parts.push(narrative);
    join(&parts)
}

/// The text a summary is embedded from: what was asked, learned, done and left to do.
pub fn summary_text(
    request: &str,
    investigated: &str,
    learned: &str,
    completed: &str,
    next_steps: &str,
) -> String {
    join(&[request, investigated, learned, completed, next_steps])
}

fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn of_observation(o: &ParsedObservation) -> String {
    observation_text(&o.title, &o.subtitle, &o.facts, &o.narrative)
}

fn of_summary(s: &ParsedSummary) -> String {
    summary_text(
        &s.request,
        &s.investigated,
        &s.learned,
        &s.completed,
        &s.next_steps,
    )
}

/// The vectors of what `parsed` will write (its observations, and its
/// summary, whichever the job type writes); empty without an embedder or on
/// an error (logged: the job goes on without them).
pub async fn for_parsed(
    embedder: Option<&Embedder>,
    job_id: Uuid,
    job_type: JobType,
    parsed: &Parsed,
) -> Vectors {
    let Some(embedder) = embedder else {
        return Vectors::default();
    };
    let observations = match job_type {
        JobType::Observations => parsed.observations.as_slice(),
        JobType::TurnSummary | JobType::SessionSummary => &[],
    };
    let mut texts: Vec<String> = observations.iter().map(of_observation).collect();
    texts.extend(parsed.summary.iter().map(of_summary));
    if texts.is_empty() {
        return Vectors::default();
    }
    let started = std::time::Instant::now();
    match embedder.embed(texts).await {
        Ok(mut vectors) => {
            tracing::debug!(%job_id, count = vectors.len(), ms = started.elapsed().as_millis() as u64, "embedded");
            let summary = parsed.summary.as_ref().and_then(|_| vectors.pop());
            Vectors {
                model: embedder.model().to_string(),
                reading: embedder.reading(),
                observations: vectors.into_iter().map(Some).collect(),
                summary,
            }
        }
        Err(e) => {
            tracing::warn!(%job_id, error = %e, "not embedded: the rows are written without vectors (backfill adds them)");
            Vectors::default()
        }
    }
}

pub use crate::store::embeddings::{Made, Target, write as store};

/// What `embedder` makes: its model and its reading.
pub fn made(embedder: &Embedder) -> Made<'_> {
    Made {
        model: embedder.model(),
        reading: embedder.reading(),
    }
}

/// Rows embedded per backfill batch.
pub const BACKFILL_BATCH: i64 = 64;

/// Embeds up to `BACKFILL_BATCH` observations and as many summaries that
/// have no vector of the embedder's model (newest first), then re-reads as
/// many whose vector is of an older reading (`re_read`); returns how many
/// were written or re-read. Call until it returns 0.
#[tracing::instrument(skip_all, err)]
pub async fn backfill_batch(pool: &PgPool, embedder: &Embedder) -> anyhow::Result<usize> {
    let made = made(embedder);
    let mut written = 0;
    for summaries in [false, true] {
        let rows = embeddings::missing(pool, made.model, summaries, BACKFILL_BATCH).await?;
        if rows.is_empty() {
            continue;
        }
        let vectors = embedder
            .embed(rows.iter().map(|r| r.text.clone()).collect())
            .await?;
        written += embeddings::write_batch(pool, made, &rows, &vectors).await?;
    }
    for summaries in [false, true] {
        written += re_read(pool, embedder, summaries).await?;
    }
    Ok(written)
}

/// Re-reads up to `BACKFILL_BATCH` observations (or summaries) whose vector
/// is of the embedder's model but an older reading: a text the current
/// reading reads as the old one did (one window) only has its reading
/// raised, the tokenizer deciding; a longer one is embedded again.
async fn re_read(pool: &PgPool, embedder: &Embedder, summaries: bool) -> anyhow::Result<usize> {
    let made = made(embedder);
    let rows = embeddings::outdated(pool, made.model, made.reading, summaries, BACKFILL_BATCH).await?;
    if rows.is_empty() {
        return Ok(0);
    }
    let longer = embedder
        .reads_past_first_window(rows.iter().map(|r| r.text.clone()).collect())
        .await?;
    let (mut again, mut same): (Vec<&Missing>, Vec<&Missing>) = (vec![], vec![]);
    for (row, longer) in rows.iter().zip(longer) {
        match longer {
            true => again.push(row),
            false => same.push(row),
        }
    }
    let mut done = embeddings::raise_reading(pool, made, &same).await? as usize;
    if !again.is_empty() {
        let vectors = embedder
            .embed(again.iter().map(|r| r.text.clone()).collect())
            .await?;
        done += embeddings::write_batch(pool, made, &again, &vectors).await?;
    }
    Ok(done)
}

/// Pause between backfill passes: rows written without a vector (a failed
/// embedding, a memory saved through the API) get one within about this long.
pub const BACKFILL_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// Backfills in passes until `shutdown`, one every `BACKFILL_INTERVAL`
/// (`backfill_pass`).
pub async fn backfill(pool: PgPool, embedder: Embedder, shutdown: tokio_util::sync::CancellationToken) {
    loop {
        match backfill_pass(&pool, &embedder, &shutdown).await {
            Some(total) if total > 0 => {
                tracing::info!(rows = total, "embedding backfill: vectors written or re-read");
            }
            _ => {}
        }
        if !pause(&shutdown, BACKFILL_INTERVAL).await {
            return;
        }
    }
}

/// One pass, when this process has the backfill's turn (`None` when
/// another generator has it): batches until nothing is missing or
/// outdated, with a pause between batches so jobs keep the CPU. An error is
/// logged and ends the pass; `shutdown` ends it too. Returns the rows
/// written or re-read.
pub async fn backfill_pass(
    pool: &PgPool,
    embedder: &Embedder,
    shutdown: &tokio_util::sync::CancellationToken,
) -> Option<usize> {
    let turn = match embeddings::backfill_turn(pool).await {
        Ok(Some(turn)) => turn,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(error = %e, "embedding backfill pass not started");
            return None;
        }
    };
    let mut total = 0;
    loop {
        match backfill_batch(pool, embedder).await {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) => {
                tracing::warn!(error = %e, "embedding backfill pass stopped");
                break;
            }
        }
        if !pause(shutdown, std::time::Duration::from_millis(200)).await {
            break;
        }
    }
    turn.end().await;
    Some(total)
}

/// Sleeps `d`; false when `shutdown` came first.
async fn pause(shutdown: &tokio_util::sync::CancellationToken, d: std::time::Duration) -> bool {
    tokio::select! {
        _ = shutdown.cancelled() => false,
        _ = tokio::time::sleep(d) => true,
    }
}
