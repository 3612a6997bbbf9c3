//! The recall benchmark: coding sessions with planted facts (bench/recall/)
//! replayed through a real API and heuristic generator, then measured for
//! fact retention (prompt, stored) and retrieval (search per mode, injected
//! context). `run` is what `src/bin/recall.rs` and `tests/recall.rs` call.

pub mod data;
pub mod events;
pub mod noise;
pub mod replay;
pub mod report;
pub mod retention;
pub mod retrieval;
pub mod scale;
pub mod store;
pub mod variations;

use std::path::{Path, PathBuf};

use anyhow::Context;

use self::{
    data::{Dataset, Set},
    report::{Report, set_report},
};

/// `small` (the hand-written sessions) or `full` (those plus generated variations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Small,
    Full,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Small => "small",
            Profile::Full => "full",
        }
    }
}

/// The data directory in the repository (`bench/recall`).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/recall")
}

/// The model files `scripts/fetch-model.sh` puts in place, if present.
pub fn model_files_present() -> bool {
    cairn_embed::model_dir().join("model.safetensors").exists()
}

/// The data set of `profile`, restricted to `sets`, validated.
pub fn load(dir: &Path, profile: Profile, sets: &[Set]) -> anyhow::Result<Dataset> {
    let mut data = Dataset::load(&dir.join("sessions.json"))?;
    if profile == Profile::Full {
        data.extend(variations::generate(&dir.join("variations.json"))?);
    }
    let data = data.only(sets);
    data.validate(|s| {
        let cwd = data.project(&s.project).map(|p| p.cwd.as_str()).unwrap_or("/");
        events::session_text(s, cwd)
    })?;
    Ok(data)
}

/// Replays `profile`'s sessions of `sets` and measures them.
pub async fn run(
    dir: &Path,
    profile: Profile,
    sets: &[Set],
    scale: &[usize],
    scale_vectors: scale::Vectors,
) -> anyhow::Result<Report> {
    let data = load(dir, profile, sets)?;
    let mut replayed = replay::replay(&data).await.context("replaying the sessions")?;
    let unembedded = replayed.complete_vectors().await?;
    replayed.stop_generator().await?;
    // Memory as a deployment keeps it: near-duplicates merged (what the
    // generator's upkeep does every few minutes), so recall is measured after.
    let upkept = cairn_generator::upkeep::run(&replayed.app.pool, "recall", 20).await?;
    let retained = retention::measure(&replayed.app.pool, &data).await?;
    let first = data.projects.first().context("no projects")?;
    let modes = retrieval::modes(&replayed, &first.slug).await?;
    let ranks = retrieval::measure(&replayed, &data, &modes).await?;
    let failed = store::jobs(&replayed.app.pool)
        .await?
        .iter()
        .filter(|j| j.status != "completed")
        .count();
    let mut notes = modes.notes.clone();
    if let Some((missing, embedded)) = unembedded.filter(|&(n, _)| n > 0 && modes.list.len() > 1) {
        notes.push(format!(
            "{missing} observations and summaries have no vector ({embedded} have one): vector figures are partial"
        ));
    }
    if failed > 0 {
        notes.push(format!("{failed} generation jobs did not complete"));
    }
    if upkept.merged > 0 {
        notes.push(format!(
            "consolidation merged {} near-duplicate observations",
            upkept.merged
        ));
    }
    let set_reports = |ranks: &retrieval::Ranks| {
        sets.iter()
            .map(|&set| {
                (
                    set.as_str().to_string(),
                    set_report(&data, set, &modes.list, &retained, ranks),
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let mut at_scale = Vec::new();
    if !scale.is_empty() {
        let mut newer = scale::Newer::new(scale_vectors).await?;
        for &n in scale {
            newer.grow_to(&replayed, n).await?;
            let ranks = retrieval::measure(&replayed, &data, &modes).await?;
            at_scale.push(report::AtScale {
                newer_per_project: n,
                sets: set_reports(&ranks),
            });
        }
    }
    let report = Report {
        profile: profile.as_str().into(),
        modes: modes.list.clone(),
        notes,
        sets: set_reports(&ranks),
        at_scale,
    };
    replayed.finish().await?;
    Ok(report)
}
