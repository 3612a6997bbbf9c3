//! The corpus notes' vector cache: what it gives is what the model gives,
//! a text is embedded once, and a record cut short is dropped, not misread.

use cairn_bench::note_vectors::{NoteVectors, cache_file};
use cairn_embed::Embedder;

const RECORD: u64 = 16 + cairn_embed::DIMS as u64 * 4;

fn texts(words: &[&str]) -> Vec<String> {
    words
        .iter()
        .map(|w| format!("The {w} step retries on ECONNRESET"))
        .collect()
}

#[tokio::test]
async fn cached_vectors_are_the_models_and_each_text_is_embedded_once() {
    let embedder = Embedder::local(&cairn_embed::model_dir()).expect("the model (scripts/fetch-model.sh)");
    let dir = std::env::temp_dir().join(format!("cairn-note-vectors-{}", uuid::Uuid::now_v7()));
    let file = cache_file(&dir, &embedder);
    let size = || std::fs::metadata(&file).map_or(0, |m| m.len());

    let first = texts(&["deploy", "build"]);
    let got = NoteVectors::of_in(&dir, &embedder, &first).await.unwrap();
    let want = embedder.embed(first.clone()).await.unwrap();
    for (text, v) in first.iter().zip(&want) {
        assert_eq!(got.get(text), v.as_slice(), "{text}");
    }
    assert_eq!(size(), 2 * RECORD);
    let embedded = embedder.texts_embedded().unwrap();

    // One known text, one new: only the new one is embedded and appended.
    let second = texts(&["deploy", "lint"]);
    let got = NoteVectors::of_in(&dir, &embedder, &second).await.unwrap();
    assert_eq!(embedder.texts_embedded().unwrap(), embedded + 1);
    assert_eq!(size(), 3 * RECORD);
    assert_eq!(got.get(&second[0]), want[0].as_slice());
    let lint = embedder.embed(vec![second[1].clone()]).await.unwrap();
    assert_eq!(got.get(&second[1]), lint[0].as_slice());

    // An interrupted append: the cut record is dropped and embedded again,
    // and the records after it stay aligned.
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(3 * RECORD - 10).unwrap();
    drop(f);
    let got = NoteVectors::of_in(&dir, &embedder, &second).await.unwrap();
    assert_eq!(size(), 3 * RECORD);
    assert_eq!(got.get(&second[1]), lint[0].as_slice());
    let again = NoteVectors::of_in(&dir, &embedder, &texts(&["deploy", "build", "lint"]))
        .await
        .unwrap();
    assert_eq!(again.get(&first[1]), want[1].as_slice());
    std::fs::remove_dir_all(&dir).unwrap();
}
