//! How near the semantic arm's signs-first scan (`Semantic::top_sketched`)
//! comes to the exact scan (`Semantic::top_exact`), on real vectors: up to
//! 100,000 distinct corpus sentences embedded with the local model (cached
//! between runs, `note_vectors`), 200 queries (a quarter each of 1, 2 and 4
//! words and sentences, none of them stored), each compared relative to the
//! project's common direction as a search is. For each size and share of
//! vectors compared exactly: recall of the exact top 5, 20, 100 and 400
//! (the hybrid pool), and p50 time of either scan.
//!
//! `cargo run --release -p cairn-bench --example sketch_recall [-- 20000 100000]`
//! (the first run embeds the sentences: about 4 minutes on 2 cores).

use std::time::Instant;

use cairn_bench::{
    corpus::{Rng, Vocab},
    note_vectors::NoteVectors,
    quantile,
};
use cairn_embed::Embedder;
use cairn_retrieval::semantic::{SKETCH_OVERSAMPLE, Semantic};

const POOL: usize = 400;
const KS: [usize; 4] = [5, 20, 100, POOL];

fn queries(vocab: &Vocab) -> Vec<String> {
    let mut rng = Rng::new(7);
    let mut out = Vec::new();
    for words in [1, 2, 4] {
        for _ in 0..50 {
            out.push(
                (0..words)
                    .map(|_| vocab.any_word(&mut rng))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    out.extend((0..50).map(|_| vocab.sentence(&mut rng)));
    out
}

/// The share of `exact`'s best `k` that `approx` holds among its best `k`.
fn recall(exact: &[(u32, f32)], approx: &[(u32, f32)], k: usize) -> Option<f64> {
    let want: Vec<u32> = exact.iter().take(k).map(|(s, _)| *s).collect();
    if want.is_empty() {
        return None;
    }
    let got = approx.iter().take(k).filter(|(s, _)| want.contains(s)).count();
    Some(got as f64 / want.len() as f64)
}

fn sorted(mut v: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

fn p50(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    quantile(&v, 0.5)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![20_000, 100_000]
    } else {
        sizes
    };
    let most = *sizes.iter().max().expect("a size");
    let embedder = Embedder::local(&cairn_embed::model_dir())?;
    let vocab = Vocab::new();
    let texts = vocab.pool_texts(most);
    anyhow::ensure!(texts.len() == most, "only {} distinct sentences", texts.len());
    let questions = queries(&vocab);
    let all: Vec<String> = texts.iter().chain(&questions).cloned().collect();
    let vectors = NoteVectors::of(&embedder, &all).await?;
    println!("| vectors | compared exactly | recall@5 | @20 | @100 | @400 | p50 scan ms |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &sizes {
        let mut semantic = Semantic::default();
        for (slot, text) in texts[..n].iter().enumerate() {
            semantic.set(slot as u32, vectors.get(text));
        }
        let probes: Vec<_> = questions.iter().map(|q| semantic.probe(vectors.get(q))).collect();
        let mut times = Vec::new();
        let exact: Vec<_> = probes
            .iter()
            .map(|p| {
                let t = Instant::now();
                let top = semantic.top_exact(p, POOL, |_| true);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                sorted(top)
            })
            .collect();
        println!("| {n} | all (exact) | 1 | 1 | 1 | 1 | {:.2} |", p50(times));
        for share in [32, 16, 8, 4] {
            let c = (n / share).max(POOL * SKETCH_OVERSAMPLE).min(n);
            let mut times = Vec::new();
            let mut recalls = vec![Vec::new(); KS.len()];
            for (p, exact) in probes.iter().zip(&exact) {
                let t = Instant::now();
                let top = semantic.top_sketched(p, POOL, |_| true, c);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                let top = sorted(top);
                for (r, k) in recalls.iter_mut().zip(KS) {
                    r.extend(recall(exact, &top, k));
                }
            }
            let r: Vec<String> = recalls.iter().map(|r| format!("{:.3}", mean(r))).collect();
            println!(
                "| {n} | {c} (1/{share}) | {} | {:.2} |",
                r.join(" | "),
                p50(times)
            );
        }
    }
    Ok(())
}
