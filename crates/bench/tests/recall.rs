//! The recall benchmark's small profile as a check: fact retention and
//! recall@5 of the eval set must not fall below `bench/recall/baseline.json`.
//! Search modes that need embeddings are skipped (with a note) when the
//! model files are absent, and required when they are present.

use cairn_bench::recall::{
    self, Profile,
    data::Set,
    report::{self, Baseline},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_profile_holds_the_baseline() {
    let dir = recall::data_dir();
    let baseline: Baseline = serde_json::from_str(
        &std::fs::read_to_string(dir.join("baseline.json")).expect("bench/recall/baseline.json"),
    )
    .expect("a baseline");
    assert_eq!(
        (baseline.profile.as_str(), baseline.set.as_str()),
        ("small", "eval")
    );
    let run = recall::run(
        &dir,
        Profile::Small,
        &[Set::Eval],
        &[],
        recall::scale::Vectors::Own,
    )
    .await
    .expect("the recall run");
    print!("{}", report::table(&run));
    let eval = &run.sets["eval"];
    assert!(
        eval.facts >= 15 && eval.questions >= eval.facts,
        "{} facts",
        eval.facts
    );
    let (failures, notes) = report::regressions(eval, &baseline, recall::model_files_present());
    for note in notes {
        println!("note: {note}");
    }
    assert!(
        failures.is_empty(),
        "below the baseline:\n{}",
        failures.join("\n")
    );
}

#[test]
fn both_profiles_load_and_validate() {
    let dir = recall::data_dir();
    let small = recall::load(&dir, Profile::Small, &[Set::Tune, Set::Eval]).expect("small profile");
    let tune = recall::load(&dir, Profile::Small, &[Set::Tune]).expect("tune set");
    let eval = recall::load(&dir, Profile::Small, &[Set::Eval]).expect("eval set");
    assert_eq!(tune.fact_count() + eval.fact_count(), small.fact_count());
    assert!(tune.fact_count() > 0 && eval.fact_count() > 0);
    let full = recall::load(&dir, Profile::Full, &[Set::Tune, Set::Eval]).expect("full profile");
    assert!(
        full.sessions.len() >= 40 && full.fact_count() >= 120,
        "{} sessions, {} facts",
        full.sessions.len(),
        full.fact_count()
    );
}
