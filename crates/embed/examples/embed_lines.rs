//! Embeds each line of a file with the local model and writes the vectors
//! as little-endian f32 rows (`DIMS` a line), for offline experiments
//! (bench/query_vectors). With `time` as the output, times 300 lines one
//! at a time instead.
//!
//! `cargo run --release -p cairn-embed --example embed_lines -- lines.txt vectors.f32`

use std::io::Write;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = &args[..] else {
        anyhow::bail!("usage: embed_lines <lines.txt> <vectors.f32 | time>");
    };
    let model = cairn_embed::LocalModel::load_with(
        &cairn_embed::model_dir(),
        cairn_embed::EmbedConfig::from_env().precision,
    )?;
    let lines: Vec<String> = std::fs::read_to_string(input)?
        .lines()
        .map(str::to_string)
        .collect();
    anyhow::ensure!(!lines.is_empty(), "{input} has no lines");
    if output == "time" {
        let mut times = Vec::new();
        for line in lines.iter().take(300) {
            let started = std::time::Instant::now();
            model.embed(std::slice::from_ref(line))?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        println!(
            "p50 {:.2} ms, p90 {:.2} ms, mean {mean:.2} ms",
            times[times.len() / 2],
            times[times.len() * 9 / 10]
        );
        return Ok(());
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(output)?);
    let started = std::time::Instant::now();
    for (i, chunk) in lines.chunks(64).enumerate() {
        for vector in model.embed(chunk)? {
            for x in vector {
                out.write_all(&x.to_le_bytes())?;
            }
        }
        if i % 50 == 0 {
            eprintln!(
                "{} / {} in {:.0?}",
                ((i + 1) * 64).min(lines.len()),
                lines.len(),
                started.elapsed()
            );
        }
    }
    Ok(())
}
