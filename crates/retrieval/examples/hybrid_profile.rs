//! Times one project's index in memory at 100,000 memories, by arm and
//! query shape (synthetic words and vectors), for profiling the search.
use std::time::Instant;

use cairn_retrieval::{Attrs, Doc, Filters, Mode, Query, State, project::ProjectIndex};
use chrono::{Duration, Utc};
use uuid::Uuid;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 2_000_001) as f32 / 1_000_000.0 - 1.0
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let mut rng = Lcg(42);
    let words: Vec<String> = (0..400).map(|i| format!("word{i}")).collect();
    let centres: Vec<Vec<f32>> = (0..2000)
        .map(|_| normalised((0..384).map(|_| rng.unit()).collect()))
        .collect();
    let mut index = ProjectIndex::default();
    let now = Utc::now();
    let started = Instant::now();
    for i in 0..n {
        let text = |rng: &mut Lcg, k: usize| {
            (0..k)
                .map(|_| words[rng.below(words.len())].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let id = Uuid::from_u128(i as u128 + 1);
        let attrs = Attrs {
            created_at: now - Duration::minutes((n - i) as i64),
            state: State::Live,
            kind: Some("discovery".into()),
            session_id: None,
            feedback: 1.0,
            private_to: None,
        };
        let doc = Doc::observation(
            id,
            attrs,
            &text(&mut rng, 8),
            "",
            &[text(&mut rng, 10)],
            &text(&mut rng, 30),
            "",
            &[],
        );
        index.upsert(doc);
        let c = &centres[rng.below(centres.len())];
        let v = normalised(c.iter().map(|x| x + 0.3 / 19.6 * rng.unit()).collect());
        index.set_vector(id, &v);
    }
    eprintln!("built {n} in {:.1?}", started.elapsed());
    let filters = Filters::default();
    for (shape, k) in [("1 word", 1), ("2 words", 2), ("4 words", 4), ("sentence", 12)] {
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            let mut times = vec![];
            for _ in 0..200 {
                let text = (0..k)
                    .map(|_| words[rng.below(words.len())].as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                let c = &centres[rng.below(centres.len())];
                let v = normalised(c.iter().map(|x| x + 0.3 / 19.6 * rng.unit()).collect());
                let q = Query {
                    project_id: Uuid::nil(),
                    text: &text,
                    exclude: "",
                    vector: Some(&v),
                    filters: &filters,
                    as_of: now,
                    summaries: true,
                    mode,
                    want: 6,
                    lexical_weight: None,
                };
                let t = Instant::now();
                std::hint::black_box(index.search(&q));
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{shape:9} {mode:?}: p50 {:.2} ms p99 {:.2} ms",
                times[100], times[197]
            );
        }
    }
}
