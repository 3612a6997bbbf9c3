//! Each corpus note's own vector: the note's text, as Cairn embeds a
//! memory, embedded with the local model once and kept on disk between runs
//! (`$HOME/.cache/cairn/bench-vectors/<model>-<precision>.bin`: records of
//! a 16-byte text hash and the vector's `DIMS` little-endian f32s).

use std::{
    collections::HashMap,
    io::{Read, Seek, Write},
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::Context;
use cairn_embed::Embedder;
use sha2::{Digest, Sha256};

use crate::corpus::DIMS;

type Key = [u8; 16];
const RECORD: usize = 16 + DIMS * 4;
/// Texts a request to the embedder.
const CHUNK: usize = 32;

/// The vectors of a set of texts, by text.
pub struct NoteVectors {
    by_key: HashMap<Key, Vec<f32>>,
}

fn key(text: &str) -> Key {
    let digest = Sha256::digest(text.as_bytes());
    digest[..16].try_into().expect("16 bytes")
}

/// `$HOME/.cache/cairn/bench-vectors`.
pub fn default_dir() -> PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".cache/cairn/bench-vectors")
}

/// The cache file in `dir` for `embedder`'s model and precision.
pub fn cache_file(dir: &Path, embedder: &Embedder) -> PathBuf {
    let precision = embedder
        .precision()
        .map_or("remote".to_string(), |p| format!("{p:?}").to_lowercase());
    dir.join(format!("{}-{precision}.bin", embedder.model()))
}

impl NoteVectors {
    /// The vector of `text`, which must have been among the texts asked for.
    pub fn get(&self, text: &str) -> &[f32] {
        self.by_key
            .get(&key(text))
            .expect("every note's text was embedded before seeding")
    }

    /// The vectors of `texts`: read from the cache file where it has them,
    /// the rest embedded now and appended to it.
    pub async fn of(embedder: &Embedder, texts: &[String]) -> anyhow::Result<Self> {
        Self::of_in(&default_dir(), embedder, texts).await
    }

    /// [`NoteVectors::of`] with the cache file in `dir`.
    pub async fn of_in(dir: &Path, embedder: &Embedder, texts: &[String]) -> anyhow::Result<Self> {
        let path = cache_file(dir, embedder);
        std::fs::create_dir_all(path.parent().expect("a parent"))
            .context("creating the vector cache's folder")?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let mut wanted: HashMap<Key, &String> = texts.iter().map(|t| (key(t), t)).collect();
        let mut by_key = HashMap::with_capacity(wanted.len());
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).context("reading the vector cache")?;
        // A record cut short by an interrupted run is dropped.
        let whole = bytes.len() / RECORD * RECORD;
        if whole < bytes.len() {
            file.set_len(whole as u64)?;
            file.seek(std::io::SeekFrom::End(0))?;
        }
        for record in bytes[..whole].chunks_exact(RECORD) {
            let k: Key = record[..16].try_into().expect("16 bytes");
            if wanted.remove(&k).is_some() {
                let v = record[16..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect();
                by_key.insert(k, v);
            }
        }
        let missing: Vec<String> = wanted.into_values().cloned().collect();
        if missing.is_empty() {
            return Ok(Self { by_key });
        }
        let started = Instant::now();
        eprintln!(
            "embedding {} corpus notes' own texts (once; cached in {})",
            missing.len(),
            path.display()
        );
        // Every request queued at once: the embedder's workers keep every core busy.
        let requests: Vec<_> = missing
            .chunks(CHUNK)
            .map(|chunk| {
                let (embedder, chunk) = (embedder.clone(), chunk.to_vec());
                tokio::spawn(async move { embedder.embed(chunk).await })
            })
            .collect();
        let mut done = 0;
        for (chunk, request) in missing.chunks(CHUNK).zip(requests) {
            let vectors = request.await?.context("embedding corpus notes")?;
            let mut out = Vec::with_capacity(chunk.len() * RECORD);
            for (text, v) in chunk.iter().zip(vectors) {
                let k = key(text);
                out.extend_from_slice(&k);
                out.extend(v.iter().flat_map(|x| x.to_le_bytes()));
                by_key.insert(k, v);
            }
            file.write_all(&out).context("appending to the vector cache")?;
            done += chunk.len();
            if done % 2_048 < CHUNK || done == missing.len() {
                eprintln!(
                    "embedded {done}/{} notes, {:.0} s",
                    missing.len(),
                    started.elapsed().as_secs_f64()
                );
            }
        }
        Ok(Self { by_key })
    }
}
