//! public_recall: recall on a public question set, Cairn's search against
//! a textbook Okapi BM25 on the same passages (`bench/public_set.sh` fetches
//! the set and runs this).
//!
//! Reads a set in BEIR's layout from `--data`: `corpus.jsonl` (`_id`,
//! `title`, `text`), `queries.jsonl` (`_id`, `text`) and `qrels/*.tsv`
//! (`query-id`, `corpus-id`, `score`; a score above 0 is relevant). Every
//! relevant passage is indexed, and distractors evenly spaced through the
//! rest of the corpus up to `--max-docs` (the local model embeds about a
//! dozen observation-sized texts a second on two cores). Each passage is a
//! live observation (title; text as narrative) of one in-memory
//! `ProjectIndex`, all written at the same instant, with its vector from
//! the local model (batches of `--batch`); the vectors are cached beside
//! the set, keyed by the texts and the model.
//!
//! Every query with a relevant passage is run in Cairn's three modes
//! (hybrid, the default; lexical, BM25F; semantic, vectors only) and by a
//! plain Okapi BM25 (lowercase alphanumeric tokens, no stemming or stop
//! words, k1 = 1.2, b = 0.75, the non-negative idf ln(1 + (N − df + 0.5) /
//! (df + 0.5)), title and text as one field). Prints recall@5 (a relevant
//! passage in the top 5) and MRR@10 per method.
//!
//! `--tune` sweeps the lexical weight of the fusion on the `dev` qrels and
//! reports each weight on `test` too: `Mode::Hybrid` itself, run with
//! `Query::lexical_weight` set.

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::Context;
use cairn_embed::Embedder;
use cairn_retrieval::{Attrs, Doc, Filters, Mode, Query, State, fuse, project::ProjectIndex};
use chrono::{DateTime, Utc};
use clap::Parser;
use sha2::{Digest, Sha256};
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Directory of the set (BEIR layout).
    #[arg(long)]
    data: PathBuf,
    /// Passages indexed at most: every relevant one, then distractors.
    #[arg(long, default_value_t = 3000)]
    max_docs: usize,
    /// Texts per call to the embedder.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Sweep the lexical weight on the dev qrels, report it on test.
    #[arg(long)]
    tune: bool,
    #[arg(long, env = "CAIRN_EMBED_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Embed again even when cached vectors exist.
    #[arg(long)]
    no_cache: bool,
}

struct Passage {
    id: String,
    title: String,
    text: String,
}

struct Set {
    docs: Vec<Passage>,
    queries: HashMap<String, String>,
    /// Split (file stem) → query id → relevant passage ids.
    qrels: Vec<(String, HashMap<String, HashSet<String>>)>,
}

fn jsonl(path: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("a line of {}", path.display())))
        .collect()
}

fn field(v: &serde_json::Value, key: &str) -> String {
    v.get(key)
        .and_then(|x| x.as_str())
        .unwrap_or_default()
        .to_string()
}

fn load(dir: &Path) -> anyhow::Result<Set> {
    let docs = jsonl(&dir.join("corpus.jsonl"))?
        .iter()
        .map(|v| Passage {
            id: field(v, "_id"),
            title: field(v, "title"),
            text: field(v, "text"),
        })
        .collect();
    let queries = jsonl(&dir.join("queries.jsonl"))?
        .iter()
        .map(|v| (field(v, "_id"), field(v, "text")))
        .collect();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("qrels"))
        .context("reading qrels/")?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    files.sort();
    let mut qrels = vec![];
    for path in files {
        let split = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut judged: HashMap<String, HashSet<String>> = HashMap::new();
        for line in std::fs::read_to_string(&path)?.lines() {
            let cols: Vec<&str> = line.split('\t').collect();
            // The header, and TREC's four columns (query, 0, doc, score).
            let (q, d, s) = match cols.as_slice() {
                [q, _, d, s] => (*q, *d, *s),
                [q, d, s] => (*q, *d, *s),
                _ => continue,
            };
            if s.trim().parse::<f64>().is_ok_and(|s| s > 0.0) {
                judged.entry(q.to_string()).or_default().insert(d.to_string());
            }
        }
        qrels.push((split, judged));
    }
    anyhow::ensure!(!qrels.is_empty(), "no qrels/*.tsv in {}", dir.display());
    Ok(Set { docs, queries, qrels })
}

/// Plain lowercase alphanumeric tokens.
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Textbook Okapi BM25 over title and text as one field.
struct Bm25 {
    postings: HashMap<String, Vec<(u32, u32)>>,
    lengths: Vec<f32>,
    avgdl: f32,
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

impl Bm25 {
    fn new(texts: &[String]) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            let toks = tokens(text);
            lengths.push(toks.len() as f32);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in toks {
                *tf.entry(t).or_default() += 1;
            }
            for (t, n) in tf {
                postings.entry(t).or_default().push((i as u32, n));
            }
        }
        let avgdl = lengths.iter().sum::<f32>() / lengths.len().max(1) as f32;
        Bm25 {
            postings,
            lengths,
            avgdl,
        }
    }

    fn search(&self, query: &str, want: usize) -> Vec<usize> {
        let n = self.lengths.len() as f32;
        let mut scores = vec![0.0f32; self.lengths.len()];
        let terms: HashSet<String> = tokens(query).into_iter().collect();
        for t in &terms {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, tf) in list {
                let tf = tf as f32;
                let norm = K1 * (1.0 - B + B * self.lengths[d as usize] / self.avgdl);
                scores[d as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut hits: Vec<(usize, f32)> = scores.into_iter().enumerate().filter(|(_, s)| *s > 0.0).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(want);
        hits.into_iter().map(|(d, _)| d).collect()
    }
}

#[derive(Default, Clone, Copy)]
struct Score {
    recall5: f64,
    mrr10: f64,
    n: usize,
}

fn score(ranked: &[Vec<usize>], relevant: &[HashSet<usize>], which: &[usize]) -> Score {
    let mut s = Score::default();
    for &q in which {
        let first = ranked[q].iter().take(10).position(|d| relevant[q].contains(d));
        if first.is_some_and(|r| r < 5) {
            s.recall5 += 1.0;
        }
        if let Some(r) = first {
            s.mrr10 += 1.0 / (r as f64 + 1.0);
        }
        s.n += 1;
    }
    if s.n > 0 {
        s.recall5 /= s.n as f64;
        s.mrr10 /= s.n as f64;
    }
    s
}

/// Vectors for `texts`, from the cache file when it holds exactly these.
async fn embed_all(
    embedder: &Embedder,
    texts: &[String],
    batch: usize,
    cache: Option<PathBuf>,
    label: &str,
) -> anyhow::Result<(Vec<Vec<f32>>, bool)> {
    const DIMS: usize = cairn_embed::DIMS;
    if let Some(path) = &cache
        && let Ok(bytes) = std::fs::read(path)
        && bytes.len() == texts.len() * DIMS * 4
    {
        let floats: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        return Ok((floats.chunks(DIMS).map(<[f32]>::to_vec).collect(), true));
    }
    let started = Instant::now();
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(batch.max(1)) {
        out.extend(embedder.embed(chunk.to_vec()).await?);
        eprint!(
            "\rembedding {label}: {}/{} ({:.1} texts/s)   ",
            out.len(),
            texts.len(),
            out.len() as f64 / started.elapsed().as_secs_f64()
        );
    }
    eprintln!();
    if let Some(path) = cache {
        let bytes: Vec<u8> = out.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok((out, false))
}

fn cache_path(dir: &Path, model: &str, texts: &[String], off: bool) -> Option<PathBuf> {
    if off {
        return None;
    }
    let mut h = Sha256::new();
    h.update(model.as_bytes());
    for t in texts {
        h.update([0u8]);
        h.update(t.as_bytes());
    }
    let digest = hex::encode(h.finalize());
    Some(dir.join(format!(".vectors-{}.f32", &digest[..16])))
}

/// Slot of a memory: ids are `Uuid::from_u128(slot + 1)`.
fn slot(id: Uuid) -> usize {
    (id.as_u128() - 1) as usize
}

fn row(name: &str, s: Score, ms: Option<f64>) {
    let ms = ms.map_or(String::new(), |m| format!("{m:>10.2}"));
    println!("{name:<28} {:>9.3} {:>8.3} {:>9} {ms}", s.recall5, s.mrr10, s.n);
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    let set = load(&args.data)?;

    // Queries: every one with a relevant passage in the corpus.
    let present: HashSet<&str> = set.docs.iter().map(|d| d.id.as_str()).collect();
    let mut query_ids: Vec<String> = vec![];
    let mut split_of: HashMap<String, Vec<String>> = HashMap::new();
    let mut judged: HashMap<String, HashSet<String>> = HashMap::new();
    for (split, qrels) in &set.qrels {
        let mut ids: Vec<&String> = qrels.keys().collect();
        ids.sort();
        for q in ids {
            let rel: HashSet<String> = qrels[q]
                .iter()
                .filter(|d| present.contains(d.as_str()))
                .cloned()
                .collect();
            if rel.is_empty() || !set.queries.contains_key(q) {
                continue;
            }
            if !judged.contains_key(q) {
                query_ids.push(q.clone());
            }
            judged.entry(q.clone()).or_default().extend(rel);
            split_of.entry(split.clone()).or_default().push(q.clone());
        }
    }
    anyhow::ensure!(!query_ids.is_empty(), "no query has a relevant passage");

    // Passages: every relevant one, then distractors evenly spaced.
    let relevant_ids: HashSet<&str> = judged.values().flatten().map(String::as_str).collect();
    let others: Vec<usize> = (0..set.docs.len())
        .filter(|&i| !relevant_ids.contains(set.docs[i].id.as_str()))
        .collect();
    let room = args.max_docs.saturating_sub(relevant_ids.len());
    let mut keep: Vec<usize> = (0..set.docs.len())
        .filter(|&i| relevant_ids.contains(set.docs[i].id.as_str()))
        .collect();
    if room >= others.len() {
        keep.extend(&others);
    } else {
        keep.extend((0..room).map(|k| others[k * others.len() / room]));
    }
    keep.sort_unstable();
    let docs: Vec<&Passage> = keep.iter().map(|&i| &set.docs[i]).collect();
    let index_of: HashMap<&str, usize> = docs.iter().enumerate().map(|(i, d)| (d.id.as_str(), i)).collect();
    let relevant: Vec<HashSet<usize>> = query_ids
        .iter()
        .map(|q| judged[q].iter().map(|d| index_of[d.as_str()]).collect())
        .collect();
    let position: HashMap<&str, usize> = query_ids
        .iter()
        .enumerate()
        .map(|(i, q)| (q.as_str(), i))
        .collect();
    let query_texts: Vec<String> = query_ids.iter().map(|q| set.queries[q].clone()).collect();
    let doc_texts: Vec<String> = docs
        .iter()
        .map(|d| {
            if d.title.is_empty() {
                d.text.clone()
            } else {
                format!("{}\n{}", d.title, d.text)
            }
        })
        .collect();
    println!(
        "set: {} ({} passages, {} queries in {} qrels files)",
        args.data.display(),
        set.docs.len(),
        set.queries.len(),
        set.qrels.len()
    );
    println!(
        "used: {} passages ({} relevant + {} distractors of {}), {} queries; loaded in {:.1} s",
        docs.len(),
        relevant_ids.len(),
        docs.len() - relevant_ids.len(),
        others.len(),
        query_ids.len(),
        started.elapsed().as_secs_f64()
    );

    // Vectors.
    let model_dir = args.model_dir.clone().unwrap_or_else(cairn_embed::model_dir);
    let embedder = Embedder::local_with(&model_dir, cairn_embed::EmbedConfig::from_env().precision)
        .with_context(|| format!("loading the model from {}", model_dir.display()))?;
    // The cache is per model and precision: 8-bit vectors are not f32 ones.
    let model = match embedder.precision() {
        Some(cairn_embed::Precision::Int8) => format!("{}:int8", embedder.model()),
        _ => embedder.model().to_string(),
    };
    let t = Instant::now();
    let doc_cache = cache_path(&args.data, &model, &doc_texts, args.no_cache);
    let (doc_vecs, cached) = embed_all(&embedder, &doc_texts, args.batch, doc_cache, "passages").await?;
    let doc_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let query_cache = cache_path(&args.data, &model, &query_texts, args.no_cache);
    let (query_vecs, _) = embed_all(&embedder, &query_texts, args.batch, query_cache, "queries").await?;
    let query_secs = t.elapsed().as_secs_f64();
    println!(
        "embedded ({model}, batch {}): {} passages in {:.1} s{}, {} queries in {:.1} s",
        args.batch,
        docs.len(),
        doc_secs,
        if cached {
            " (cached)".to_string()
        } else {
            format!(" ({:.1}/s)", docs.len() as f64 / doc_secs)
        },
        query_ids.len(),
        query_secs
    );

    // Cairn's index: every passage a live observation, all of one instant.
    let t = Instant::now();
    let at: DateTime<Utc> = DateTime::from_timestamp(1_767_225_600, 0).expect("a valid instant");
    let mut index = ProjectIndex::default();
    for (i, (d, v)) in docs.iter().zip(&doc_vecs).enumerate() {
        let id = Uuid::from_u128(i as u128 + 1);
        let attrs = Attrs {
            created_at: at,
            state: State::Live,
            kind: Some("discovery".into()),
            session_id: None,
            feedback: 1.0,
            private_to: None,
        };
        index.upsert(Doc::observation(id, attrs, &d.title, "", &[], &d.text, "", &[]));
        anyhow::ensure!(index.set_vector(id, v), "vector refused");
    }
    let cairn_index_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let bm25 = Bm25::new(&doc_texts);
    let bm25_index_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "indexed: Cairn in {cairn_index_ms:.0} ms ({} KiB), BM25 baseline in {bm25_index_ms:.0} ms",
        index.bytes() / 1024
    );

    let filters = Filters::default();
    let project_id = Uuid::nil();
    let run_at = |mode: Mode, q: usize, want: usize, lexical_weight: Option<f32>| {
        let vector = (mode != Mode::Lexical).then_some(query_vecs[q].as_slice());
        index.search(&Query {
            project_id,
            text: &query_texts[q],
            exclude: "",
            vector,
            filters: &filters,
            as_of: at,
            summaries: false,
            mode,
            want,
            lexical_weight,
        })
    };
    let run = |mode: Mode, q: usize, want: usize| run_at(mode, q, want, None);
    let all: Vec<usize> = (0..query_ids.len()).collect();

    println!();
    println!(
        "{:<28} {:>9} {:>8} {:>9} {:>10}",
        "method", "recall@5", "MRR@10", "queries", "ms/query"
    );
    let mut table: Vec<(String, Vec<Vec<usize>>)> = vec![];
    for (name, mode) in [
        ("cairn hybrid (default)", Mode::Hybrid),
        ("cairn lexical (BM25F)", Mode::Lexical),
        ("cairn semantic (vector)", Mode::Semantic),
    ] {
        let t = Instant::now();
        let ranked: Vec<Vec<usize>> = all
            .iter()
            .map(|&q| run(mode, q, 10).iter().map(|h| slot(h.id)).collect())
            .collect();
        let ms = t.elapsed().as_secs_f64() * 1e3 / all.len() as f64;
        row(name, score(&ranked, &relevant, &all), Some(ms));
        table.push((name.to_string(), ranked));
    }
    let t = Instant::now();
    let ranked: Vec<Vec<usize>> = query_texts.iter().map(|q| bm25.search(q, 10)).collect();
    let ms = t.elapsed().as_secs_f64() * 1e3 / all.len() as f64;
    row("okapi bm25 (baseline)", score(&ranked, &relevant, &all), Some(ms));
    table.push(("okapi bm25".into(), ranked));

    let mut splits: Vec<(&String, &Vec<String>)> = split_of.iter().collect();
    splits.sort();
    if splits.len() > 1 {
        for (split, qs) in &splits {
            println!();
            println!("by split: {split}");
            let which: Vec<usize> = qs.iter().map(|q| position[q.as_str()]).collect();
            for (name, ranked) in &table {
                row(name, score(ranked, &relevant, &which), None);
            }
        }
    }

    if args.tune {
        let dev: Vec<usize> = split_of
            .get("dev")
            .map(|qs| qs.iter().map(|q| position[q.as_str()]).collect())
            .unwrap_or_default();
        let test: Vec<usize> = split_of
            .get("test")
            .map(|qs| qs.iter().map(|q| position[q.as_str()]).collect())
            .unwrap_or_default();
        anyhow::ensure!(
            !dev.is_empty() && !test.is_empty(),
            "--tune needs qrels/dev.tsv and qrels/test.tsv"
        );
        // Mode::Hybrid itself at each weight: the sweep is the shipped fusion.
        let at_weight = |w: f32| -> Vec<Vec<usize>> {
            all.iter()
                .map(|&q| {
                    run_at(Mode::Hybrid, q, 10, Some(w))
                        .into_iter()
                        .map(|h| slot(h.id))
                        .collect()
                })
                .collect()
        };
        println!();
        println!(
            "{:<8} {:>12} {:>10} {:>13} {:>11}",
            "weight", "dev recall@5", "dev MRR@10", "test recall@5", "test MRR@10"
        );
        let mut best = (f32::NAN, Score::default());
        for step in 0..=10 {
            let w = step as f32 / 10.0;
            let ranked = at_weight(w);
            let (d, t) = (score(&ranked, &relevant, &dev), score(&ranked, &relevant, &test));
            let mark = if (w - fuse::lexical_weight()).abs() < 1e-6 {
                "  (shipped)"
            } else {
                ""
            };
            println!(
                "{w:<8.1} {:>12.3} {:>10.3} {:>13.3} {:>11.3}{mark}",
                d.recall5, d.mrr10, t.recall5, t.mrr10
            );
            let better = best.0.is_nan()
                || d.mrr10 > best.1.mrr10 + 1e-9
                || ((d.mrr10 - best.1.mrr10).abs() <= 1e-9 && d.recall5 > best.1.recall5);
            if better {
                best = (w, d);
            }
        }
        let chosen = score(&at_weight(best.0), &relevant, &test);
        let shipped = score(&at_weight(fuse::lexical_weight()), &relevant, &test);
        println!(
            "best on dev (MRR@10): weight {:.1}; on test recall@5 {:.3}, MRR@10 {:.3} (shipped {}: {:.3}, {:.3}; {} dev, {} test queries)",
            best.0,
            chosen.recall5,
            chosen.mrr10,
            fuse::lexical_weight(),
            shipped.recall5,
            shipped.mrr10,
            dev.len(),
            test.len()
        );
    }
    println!();
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}
