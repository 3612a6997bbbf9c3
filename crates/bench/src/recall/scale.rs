//! The scale variant: after the first measurement, each project gets N
//! newer memories (routine developer notes from `crate::corpus`: the same
//! vocabulary of identifiers, paths and error codes a team writes), and the
//! same questions are asked again. A memory that can only be found among
//! the newest N is lost here.
//!
//! Each note's vector is, by default, the embedding of its own text, as a
//! real memory's is (`Vectors::Own`; embedded once, then read from a cache
//! file). `Vectors::Titles` is the cheaper corpus of earlier reports: 200
//! title sentences embedded, each note one of them as its title and that
//! title's vector plus noise, so each vector is shared, near enough, by
//! 1 in 200 notes.

use std::{sync::Arc, time::Instant};

use anyhow::Context;
use cairn_embed::Embedder;
use chrono::Utc;

use super::replay::Replayed;
use crate::corpus::{Corpus, Vocab, seed_corpus};
use crate::note_vectors::NoteVectors;

/// Where the corpus notes' vectors come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Vectors {
    /// Each note's own text, embedded.
    Own,
    /// Each note's title's vector (one of 200) plus noise.
    Titles,
}

/// Distinct title sentences embedded for the corpus.
const TITLES: usize = 200;
/// Noise added to each memory's title vector (norm), as `search_scale` does.
const NOISE: f32 = 0.3;
/// Rows a statement.
const BATCH: usize = 2_000;

/// The corpus's vocabulary and embedded titles, made once for every step.
pub struct Newer {
    kind: Vectors,
    embedder: Embedder,
    vocab: Vocab,
    titles: Vec<String>,
    vectors: Vec<Vec<f32>>,
    /// Memories each project holds from earlier steps.
    added: usize,
}

impl Newer {
    /// Embeds the title sentences with the local model (the scale variant needs it).
    pub async fn new(kind: Vectors) -> anyhow::Result<Self> {
        let dir = cairn_embed::model_dir();
        let embedder = Embedder::local(&dir).context("the scale variant embeds its corpus's titles")?;
        let vocab = Vocab::new();
        let titles = vocab.pool_texts(TITLES);
        let mut vectors = Vec::with_capacity(titles.len());
        for chunk in titles.chunks(64) {
            vectors.extend(embedder.embed(chunk.to_vec()).await?);
        }
        Ok(Self {
            kind,
            embedder,
            vocab,
            titles,
            vectors,
            added: 0,
        })
    }

    /// Brings every project to `per_project` newer memories (written now,
    /// after every planted fact), and waits until the API's index holds them.
    pub async fn grow_to(&mut self, replayed: &Replayed, per_project: usize) -> anyhow::Result<()> {
        let more = per_project.saturating_sub(self.added);
        if more == 0 {
            return Ok(());
        }
        let projects: Vec<uuid::Uuid> = replayed.projects.values().copied().collect();
        let started = Instant::now();
        let mut corpus = Corpus {
            vocab: self.vocab.clone(),
            titles: self.titles.clone(),
            vectors: self.vectors.clone(),
            projects: projects.clone(),
            team: replayed.app.team_id,
            model: self.embedder.model().to_string(),
            noise: NOISE,
            own: None,
            n: more * projects.len(),
            first: self.added,
            t0: Utc::now(),
            // Spread over the last minute: newer than every fact, none in the future.
            span_days: 60.0 / 86_400.0,
        };
        if self.kind == Vectors::Own {
            let texts = corpus.note_texts();
            corpus.own = Some(Arc::new(NoteVectors::of(&self.embedder, &texts).await?));
        }
        seed_corpus(&replayed.app.pool, Arc::new(corpus), BATCH).await?;
        self.added = per_project;
        for project in &projects {
            self.wait_indexed(replayed, *project).await?;
        }
        eprintln!(
            "scale: {per_project} newer memories in each of {} projects ({:?} vectors), seeded and indexed in {:.1} s",
            projects.len(),
            self.kind,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// Writes one sentinel memory after the corpus and searches until it is
    /// found: the index follows commits in order, so the corpus is in too.
    async fn wait_indexed(&self, replayed: &Replayed, project: uuid::Uuid) -> anyhow::Result<()> {
        let word = format!("scalesentinel{}", self.added);
        sqlx::query(
            "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, provider, model)
             VALUES ($1, $2, $3, 'bench:' || $1, 'discovery', $4, 'bench', 'synthetic')",
        )
        .bind(uuid::Uuid::now_v7())
        .bind(replayed.app.team_id)
        .bind(project)
        .bind(format!("{word} marks the end of the corpus"))
        .execute(&replayed.app.pool)
        .await
        .context("writing the sentinel")?;
        let deadline = Instant::now() + std::time::Duration::from_secs(600);
        loop {
            let (status, body) = replayed
                .get(&format!(
                    "/v1/search?project={project}&query={word}&limit=1&mode=fulltext"
                ))
                .await?;
            if status == 200 && body["results"].as_array().is_some_and(|r| !r.is_empty()) {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the index did not catch up within 10 minutes"
            );
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    }
}
