//! The local model against its real files (scripts/fetch-model.sh puts them
//! in place): paraphrases are closer than unrelated texts, a batch gives
//! what one-by-one gives, vectors have norm 1; a text longer than the
//! model's window is read to its end; a missing model turns embeddings off
//! with one warning.

use std::{
    io::Write,
    path::PathBuf,
    sync::{Arc, Mutex},
};

use cairn_embed::{DIMS, EmbedConfig, Embedder, dot};

fn model_dir() -> PathBuf {
    let dir = cairn_embed::model_dir();
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model in {} (run scripts/fetch-model.sh)",
        dir.display()
    );
    dir
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn paraphrases_are_closer_than_unrelated_texts() {
    let embedder = Embedder::local(&model_dir()).unwrap();
    assert_eq!(embedder.model(), "all-MiniLM-L6-v2");
    let v = embedder
        .embed(texts(&[
            "the nightly build failed because the linker ran out of memory",
            "why did last night's CI build break",
            "we chose Postgres over MySQL for JSONB",
            "which database did we pick and why",
        ]))
        .await
        .unwrap();
    let (build, question, postgres, db_question) = (&v[0], &v[1], &v[2], &v[3]);
    let paraphrase = dot(build, question);
    let unrelated = dot(build, postgres);
    println!(
        "build~question {paraphrase:.3}, build~postgres {unrelated:.3}, postgres~db question {:.3}, question~postgres {:.3}",
        dot(postgres, db_question),
        dot(question, postgres)
    );
    assert!(paraphrase > 0.35, "paraphrase similarity {paraphrase}");
    assert!(unrelated < 0.2, "unrelated similarity {unrelated}");
    assert!(paraphrase > unrelated + 0.25);
    // Each question is closer to its own answer than to the other.
    assert!(dot(db_question, postgres) > dot(db_question, build));
    assert!(dot(question, build) > dot(question, postgres));
}

/// A memory longer than the model's 256 tokens, whose answer is in its
/// tail: its vector holds the tail, where a truncating embedder would give
/// the head's vector alone.
#[tokio::test]
async fn a_text_longer_than_one_window_is_read_to_its_end() {
    let embedder = Embedder::local(&model_dir()).unwrap();
    let head = "Rendered the quarterly sales report as a spreadsheet with one sheet per region. ".repeat(20);
    let tail = "The deploy failed because the Kubernetes secret registry-creds had expired; we rotated it.";
    let question = "why did pulling the container image fail with an authentication error";
    let v = embedder
        .embed(texts(&[&head, &format!("{head}{tail}"), question, tail]))
        .await
        .unwrap();
    let (head_only, long, question, tail_only) = (&v[0], &v[1], &v[2], &v[3]);
    let (to_head, to_long) = (dot(question, head_only), dot(question, long));
    println!(
        "question~head {to_head:.3}, question~head+tail {to_long:.3}, question~tail {:.3}",
        dot(question, tail_only)
    );
    assert!(
        dot(head_only, long) < 0.99,
        "the long text's vector is its head's: the tail was dropped"
    );
    assert!(
        to_long > to_head + 0.05,
        "the tail brought the long text no closer: {to_head} → {to_long}"
    );
    assert!((dot(long, long) - 1.0).abs() < 1e-4);
    // One window is the model's vector as it is: the same text alone and in a batch with long ones.
    let alone = embedder.embed(texts(&[tail])).await.unwrap();
    assert_eq!(&alone[0], tail_only);
}

#[tokio::test]
async fn a_batch_gives_what_one_by_one_gives_and_every_vector_has_norm_one() {
    let embedder = Embedder::local(&model_dir()).unwrap();
    let inputs = texts(&[
        "short",
        "Fixed the parser panic on empty input by returning an empty document instead of indexing past the end",
        "",
        &"a very long observation narrative that goes on and on ".repeat(80),
    ]);
    let batch = embedder.embed(inputs.clone()).await.unwrap();
    assert_eq!(batch.len(), inputs.len());
    for (text, from_batch) in inputs.iter().zip(&batch) {
        let alone = embedder.embed_one(text).await.unwrap();
        assert_eq!(alone.len(), DIMS);
        let norm = alone.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        let diff = alone
            .iter()
            .zip(from_batch)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(diff < 1e-4, "batch and alone differ by {diff} for {:.30}", text);
    }
    // Different texts give different vectors; the same text the same one.
    assert!(dot(&batch[0], &batch[1]) < 0.99);
    assert!(embedder.embed(vec![]).await.unwrap().is_empty());
}

#[tokio::test]
async fn more_than_one_internal_batch_keeps_the_order() {
    let embedder = Embedder::local(&model_dir()).unwrap();
    let inputs: Vec<String> = (0..20)
        .map(|i| format!("observation number {i} about topic {}", i % 7))
        .collect();
    let all = embedder.embed(inputs.clone()).await.unwrap();
    assert_eq!(all.len(), 20);
    let last = embedder.embed_one(&inputs[19]).await.unwrap();
    assert!(dot(&all[19], &last) > 0.9999);
}

/// Log lines written while `f` runs, at WARN and above.
fn warnings_during(f: impl FnOnce()) -> Vec<String> {
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    text.lines().map(str::to_string).collect()
}

#[test]
fn a_missing_or_empty_model_dir_turns_embeddings_off_with_one_warning() {
    let empty = std::env::temp_dir().join(format!("cairn-embed-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    for dir in [empty.clone(), empty.join("does-not-exist")] {
        let config =
            EmbedConfig::from_lookup(|k| (k == "CAIRN_EMBED_MODEL_DIR").then(|| dir.display().to_string()));
        let mut embedder = Some(());
        let warnings = warnings_during(|| {
            embedder = Embedder::from_config(&config).map(|_| ());
        });
        assert!(embedder.is_none(), "no model in {}", dir.display());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("WARN") && warnings[0].contains("full-text only"),
            "{warnings:?}"
        );
    }
    // A model directory with a broken file is off too, not a panic.
    std::fs::write(empty.join("config.json"), "{not json").unwrap();
    std::fs::write(empty.join("model.safetensors"), "nope").unwrap();
    std::fs::write(empty.join("tokenizer.json"), "{}").unwrap();
    let config =
        EmbedConfig::from_lookup(|k| (k == "CAIRN_EMBED_MODEL_DIR").then(|| empty.display().to_string()));
    let warnings = warnings_during(|| assert!(Embedder::from_config(&config).is_none()));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings_during(|| assert!(Embedder::from_config(&EmbedConfig::none()).is_none())).is_empty());
    std::fs::remove_dir_all(&empty).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_callers_each_get_their_own_vectors() {
    let embedder = Embedder::local(&model_dir()).unwrap();
    let model = cairn_embed::LocalModel::load(&model_dir()).unwrap();
    let requests: Vec<Vec<String>> = (0..24)
        .map(|i| match i % 3 {
            0 => vec![format!("request {i}: why did the deploy fail")],
            1 => vec![
                format!("flaky test number {i}"),
                format!("{i} rotated the registry secret"),
            ],
            _ => vec![format!("SESSION_TTL {i}"); 3],
        })
        .collect();
    let tasks: Vec<_> = requests
        .iter()
        .cloned()
        .map(|texts| {
            let embedder = embedder.clone();
            tokio::spawn(async move { embedder.embed(texts).await.unwrap() })
        })
        .collect();
    for (task, texts) in tasks.into_iter().zip(&requests) {
        let got = task.await.unwrap();
        let want = model.embed(texts).unwrap();
        assert_eq!(got.len(), texts.len());
        for (g, w) in got.iter().zip(&want) {
            assert!(dot(g, w) > 0.99999, "{texts:?}: cosine {}", dot(g, w));
        }
    }
}
