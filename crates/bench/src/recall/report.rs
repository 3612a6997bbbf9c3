//! The figures of a run, per set: retention (prompt, stored), and recall@5
//! and MRR of search (per mode) and of the two injected contexts; printed as
//! a table, written as JSON, and compared with a baseline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    data::{Dataset, Set},
    retention::Retained,
    retrieval::Ranks,
};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    /// Share of questions whose first relevant item is within the first 5.
    pub recall_at_5: f64,
    /// Mean of 1/rank of the first relevant item (0 when none).
    pub mrr: f64,
    /// Share of questions with a relevant item anywhere in what came back.
    pub found: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Retention {
    /// Share of facts present in a prompt built for their session's jobs.
    pub prompt: f64,
    /// Share of facts present in their session's stored observations or summaries.
    pub stored: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FactResult {
    pub id: String,
    pub kind: String,
    pub prompt: bool,
    pub stored: bool,
    /// Mode → rank per question (null: not found).
    pub search: BTreeMap<String, Vec<Option<usize>>>,
    pub session_start: Vec<Option<usize>>,
    pub prompt_context: Vec<Option<usize>>,
}

/// What a later session is given when its first prompt is the question.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MomentOfNeed {
    /// Share of questions whose fact reached the agent (SessionStart or the prompt's context).
    pub reached: f64,
    /// Share of injected items that hold the fact asked about.
    pub precision: f64,
    /// Mean tokens injected per session (SessionStart and the prompt).
    pub tokens_per_session: f64,
    /// Share of unrelated prompts (`retrieval::UNRELATED_PROMPTS`, asked in
    /// each project) that got memory injected: each one is a false injection.
    #[serde(default)]
    pub unrelated_injected: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SetReport {
    pub sessions: usize,
    pub facts: usize,
    pub questions: usize,
    pub retention: Retention,
    /// Per kind of fact (`error`, `config`, `decision`, `change`).
    pub retention_by_kind: BTreeMap<String, Retention>,
    /// Per search mode.
    pub search: BTreeMap<String, Metrics>,
    /// The memory injected at SessionStart (no query).
    pub session_start: Metrics,
    /// The related memories injected on UserPromptSubmit, the prompt being the question.
    pub prompt_context: Metrics,
    #[serde(default)]
    pub moment_of_need: MomentOfNeed,
    pub per_fact: Vec<FactResult>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub profile: String,
    pub modes: Vec<String>,
    pub notes: Vec<String>,
    pub sets: BTreeMap<String, SetReport>,
    /// The same questions after newer memories were added (`--scale`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at_scale: Vec<AtScale>,
}

/// The figures after `newer_per_project` newer memories in every project.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AtScale {
    pub newer_per_project: usize,
    pub sets: BTreeMap<String, SetReport>,
}

fn share(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

fn metrics(ranks: &[Option<usize>]) -> Metrics {
    let n = ranks.len();
    Metrics {
        recall_at_5: share(ranks.iter().filter(|r| r.is_some_and(|r| r <= 5)).count(), n),
        mrr: if n == 0 {
            0.0
        } else {
            ranks
                .iter()
                .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
                .sum::<f64>()
                / n as f64
        },
        found: share(ranks.iter().filter(|r| r.is_some()).count(), n),
    }
}

fn retention<'a>(facts: impl Iterator<Item = &'a FactResult>) -> Retention {
    let facts: Vec<&FactResult> = facts.collect();
    Retention {
        prompt: share(facts.iter().filter(|f| f.prompt).count(), facts.len()),
        stored: share(facts.iter().filter(|f| f.stored).count(), facts.len()),
    }
}

/// The figures of `set`'s facts.
pub fn set_report(
    data: &Dataset,
    set: Set,
    modes: &[String],
    retained: &Retained,
    ranks: &Ranks,
) -> SetReport {
    let sessions: Vec<_> = data.sessions.iter().filter(|s| data.set_of(s) == set).collect();
    let mut per_fact = Vec::new();
    for fact in sessions.iter().flat_map(|s| &s.facts) {
        let (prompt, stored) = retained.get(&fact.id).copied().unwrap_or_default();
        let questions = 0..fact.questions.len();
        let of = |map: &std::collections::HashMap<(String, usize), Option<usize>>| -> Vec<Option<usize>> {
            questions
                .clone()
                .map(|q| map.get(&(fact.id.clone(), q)).copied().flatten())
                .collect()
        };
        per_fact.push(FactResult {
            id: fact.id.clone(),
            kind: fact.kind.clone(),
            prompt,
            stored,
            search: modes
                .iter()
                .map(|m| (m.clone(), ranks.search.get(m).map(of).unwrap_or_default()))
                .collect(),
            session_start: of(&ranks.session_start),
            prompt_context: of(&ranks.prompt_context),
        });
    }
    let all = |pick: &dyn Fn(&FactResult) -> Vec<Option<usize>>| -> Vec<Option<usize>> {
        per_fact.iter().flat_map(pick).collect()
    };
    let kinds: std::collections::BTreeSet<String> = per_fact.iter().map(|f| f.kind.clone()).collect();
    SetReport {
        sessions: sessions.len(),
        facts: per_fact.len(),
        questions: per_fact.iter().map(|f| f.session_start.len()).sum(),
        retention: retention(per_fact.iter()),
        retention_by_kind: kinds
            .into_iter()
            .map(|k| {
                let r = retention(per_fact.iter().filter(|f| f.kind == k));
                (k, r)
            })
            .collect(),
        search: modes
            .iter()
            .map(|m| {
                let ranks = all(&|f| f.search.get(m).cloned().unwrap_or_default());
                (m.clone(), metrics(&ranks))
            })
            .collect(),
        session_start: metrics(&all(&|f| f.session_start.clone())),
        prompt_context: metrics(&all(&|f| f.prompt_context.clone())),
        moment_of_need: {
            let moments: Vec<_> = per_fact
                .iter()
                .flat_map(|f| {
                    let id = f.id.clone();
                    (0..f.session_start.len())
                        .filter_map(move |q| ranks.moment.get(&(id.clone(), q)).copied())
                })
                .collect();
            let items: usize = moments.iter().map(|m| m.items).sum();
            let projects: std::collections::BTreeSet<&str> =
                sessions.iter().map(|s| s.project.as_str()).collect();
            let (asked, injected) = projects
                .iter()
                .filter_map(|p| ranks.unrelated.get(*p))
                .fold((0, 0), |(a, i), (x, y)| (a + x, i + y));
            MomentOfNeed {
                unrelated_injected: share(injected, asked),
                reached: share(moments.iter().filter(|m| m.reached).count(), moments.len()),
                precision: share(moments.iter().map(|m| m.relevant).sum(), items),
                tokens_per_session: if moments.is_empty() {
                    0.0
                } else {
                    moments.iter().map(|m| m.tokens).sum::<usize>() as f64 / moments.len() as f64
                },
            }
        },
        per_fact,
    }
}

/// The table printed to stdout.
pub fn table(report: &Report) -> String {
    let mut out = format!(
        "recall profile={} modes={}\n",
        report.profile,
        report.modes.join(",")
    );
    for note in &report.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(&format!(
        "{:<5} {:>8} {:>9} {:>16} {:<15} {:>9} {:>6} {:>6}\n",
        "set", "facts/q", "ret.prompt", "ret.stored", "retrieval", "recall@5", "MRR", "found"
    ));
    for (set, r) in &report.sets {
        let mut rows: Vec<(String, &Metrics)> =
            r.search.iter().map(|(m, x)| (format!("search {m}"), x)).collect();
        rows.push(("session start".into(), &r.session_start));
        rows.push(("prompt context".into(), &r.prompt_context));
        for (i, (name, m)) in rows.iter().enumerate() {
            let (facts, prompt, stored) = if i == 0 {
                (
                    format!("{}/{}", r.facts, r.questions),
                    format!("{:.3}", r.retention.prompt),
                    format!("{:.3}", r.retention.stored),
                )
            } else {
                Default::default()
            };
            out.push_str(&format!(
                "{:<5} {facts:>8} {prompt:>9} {stored:>16} {name:<15} {:>9.3} {:>6.3} {:>6.3}\n",
                if i == 0 { set.as_str() } else { "" },
                m.recall_at_5,
                m.mrr,
                m.found
            ));
        }
        let kinds: Vec<String> = r
            .retention_by_kind
            .iter()
            .map(|(k, x)| format!("{k} {:.2}/{:.2}", x.prompt, x.stored))
            .collect();
        out.push_str(&format!(
            "      retention by kind (prompt/stored): {}\n",
            kinds.join(", ")
        ));
        let m = &r.moment_of_need;
        out.push_str(&format!(
            "      moment of need (SessionStart + the question as prompt): reached {:.3}, precision {:.3}, {:.0} tokens/session; unrelated prompts injected {:.3}\n",
            m.reached, m.precision, m.tokens_per_session, m.unrelated_injected
        ));
    }
    for step in &report.at_scale {
        out.push_str(&format!(
            "after {} newer memories in each project (recall@5 / MRR):\n",
            step.newer_per_project
        ));
        for (set, r) in &step.sets {
            let mut parts: Vec<String> = r
                .search
                .iter()
                .map(|(m, x)| format!("{m} {:.3} / {:.3}", x.recall_at_5, x.mrr))
                .collect();
            parts.push(format!("session start {:.3}", r.session_start.recall_at_5));
            parts.push(format!("prompt context {:.3}", r.prompt_context.recall_at_5));
            parts.push(format!(
                "moment of need {:.3} ({:.0} tokens)",
                r.moment_of_need.reached, r.moment_of_need.tokens_per_session
            ));
            out.push_str(&format!("{set:<5} {}\n", parts.join(", ")));
        }
    }
    out
}

/// The figures a baseline holds: one set's, per mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub profile: String,
    pub set: String,
    pub retention: Retention,
    pub search: BTreeMap<String, Metrics>,
    pub session_start: Metrics,
    pub prompt_context: Metrics,
}

impl Baseline {
    pub fn of(report: &Report, set: Set) -> Option<Baseline> {
        let r = report.sets.get(set.as_str())?;
        Some(Baseline {
            profile: report.profile.clone(),
            set: set.as_str().into(),
            retention: r.retention.clone(),
            search: r.search.clone(),
            session_start: r.session_start.clone(),
            prompt_context: r.prompt_context.clone(),
        })
    }
}

/// Float noise allowed below a baseline figure.
pub const EPSILON: f64 = 1e-9;

/// Where `run` falls below `base`: retention (prompt, stored) and recall@5
/// of every search mode and both contexts. A mode the baseline has and the
/// run lacks is a failure only if `embeddings_expected`; else a note.
pub fn regressions(
    run: &SetReport,
    base: &Baseline,
    embeddings_expected: bool,
) -> (Vec<String>, Vec<String>) {
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    let mut pairs = vec![
        (
            "retention.prompt".to_string(),
            run.retention.prompt,
            base.retention.prompt,
        ),
        (
            "retention.stored".to_string(),
            run.retention.stored,
            base.retention.stored,
        ),
        (
            "session start recall@5".to_string(),
            run.session_start.recall_at_5,
            base.session_start.recall_at_5,
        ),
        (
            "prompt context recall@5".to_string(),
            run.prompt_context.recall_at_5,
            base.prompt_context.recall_at_5,
        ),
    ];
    for (mode, then) in &base.search {
        match run.search.get(mode) {
            Some(now) => pairs.push((format!("search {mode} recall@5"), now.recall_at_5, then.recall_at_5)),
            None if embeddings_expected => failures.push(format!(
                "search mode {mode} is in the baseline but the run has none, though the model files are present"
            )),
            None => notes.push(format!("search mode {mode} skipped: no embeddings on this machine")),
        }
    }
    for (what, now, then) in pairs {
        if now + EPSILON < then {
            failures.push(format!("{what}: {now:.3} < baseline {then:.3}"));
        }
    }
    (failures, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_become_recall_and_mrr() {
        let m = metrics(&[Some(1), Some(2), Some(6), None]);
        assert_eq!(m.recall_at_5, 0.5);
        assert!((m.mrr - (1.0 + 0.5 + 1.0 / 6.0) / 4.0).abs() < 1e-12);
        assert_eq!(m.found, 0.75);
        assert_eq!(metrics(&[]), Metrics::default());
    }

    #[test]
    fn a_drop_below_the_baseline_fails_and_a_missing_mode_only_with_models() {
        let m = |r| Metrics {
            recall_at_5: r,
            mrr: r,
            found: r,
        };
        let run = SetReport {
            sessions: 1,
            facts: 1,
            questions: 1,
            retention: Retention {
                prompt: 0.9,
                stored: 0.5,
            },
            retention_by_kind: BTreeMap::new(),
            search: [("fulltext".to_string(), m(0.4))].into(),
            session_start: m(0.2),
            prompt_context: m(0.3),
            moment_of_need: MomentOfNeed::default(),
            per_fact: vec![],
        };
        let base = Baseline {
            profile: "small".into(),
            set: "eval".into(),
            retention: run.retention.clone(),
            search: [("fulltext".to_string(), m(0.4)), ("vector".to_string(), m(0.6))].into(),
            session_start: m(0.2),
            prompt_context: m(0.3),
        };
        let (failures, notes) = regressions(&run, &base, false);
        assert!(failures.is_empty() && notes.len() == 1, "{failures:?} {notes:?}");
        assert_eq!(regressions(&run, &base, true).0.len(), 1);
        let worse = SetReport {
            retention: Retention {
                prompt: 0.8,
                stored: 0.5,
            },
            ..run
        };
        assert_eq!(regressions(&worse, &base, false).0.len(), 1);
    }
}
