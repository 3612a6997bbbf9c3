//! The same-style check of the semantic arm's common direction: one root
//! cause and the 320 distinct routine deploy notes of the API test
//! `an_old_root_cause_is_found_among_2500_newer_routine_notes_by_every_question`,
//! embedded with the local model; for each question and λ, how many
//! routine notes outrank the root cause by `cos(q, d) − λ·μ·(d − q)`.
//!
//! `cargo run --release -p cairn-bench --example common_direction`

use cairn_embed::Embedder;
use cairn_testkit::deploy_story::{DISTINCT_ROUTINE, QUESTIONS, ROOT_CAUSE, routine_note};

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let embedder = Embedder::local(&cairn_embed::model_dir())?;
    let routine: Vec<String> = (0..DISTINCT_ROUTINE).map(routine_note).collect();
    let root = embedder.embed_one(ROOT_CAUSE).await?;
    let mut notes = Vec::new();
    for chunk in routine.chunks(32) {
        notes.extend(embedder.embed(chunk.to_vec()).await?);
    }
    let mut mean = vec![0f32; root.len()];
    for v in &notes {
        mean.iter_mut()
            .zip(v)
            .for_each(|(m, x)| *m += x / notes.len() as f32);
    }
    println!(
        "| question | λ | root cause's similarity (plain cosine) | best routine note | routine notes above it |"
    );
    println!("|---|---|---|---|---|");
    for question in QUESTIONS {
        let q = embedder.embed_one(question).await?;
        for lambda in [0.0f32, 0.2, 0.3, 0.4, 0.5] {
            let score = |d: &[f32]| dot(&q, d) - lambda * (dot(&mean, d) - dot(&mean, &q));
            let mine = score(&root);
            let best = notes.iter().map(|d| score(d)).fold(f32::MIN, f32::max);
            let above = notes.iter().filter(|d| score(d) > mine).count();
            println!(
                "| {question} | {lambda:.1} | {mine:.3} ({:.3}) | {best:.3} | {above} of {} |",
                dot(&q, &root),
                notes.len()
            );
        }
    }
    Ok(())
}
