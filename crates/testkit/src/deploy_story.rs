//! The old root cause among routine notes (issue 20's reproduction): one
//! memory of why the deploy pipeline failed, the questions that must find
//! it, and routine notes about the same pipeline (none about credentials or
//! failures; 320 distinct texts). Shared by the API's retrieval tests and
//! the bench's `common_direction` example.

pub const ROOT_CAUSE: &str = "The deploy pipeline failed because the Kubernetes secret registry-creds had expired; \
                              rotated it with scripts/rotate-registry.sh.";

pub const QUESTIONS: [&str; 3] = [
    "why did the deploy pipeline fail",
    "credentials for the container registry ran out",
    "expired kubernetes secret",
];

const ROUTINE: [&str; 8] = [
    "Deploy pipeline run {n}: deployed build {n} to staging; all checks green.",
    "Promoted build {n} through the deploy pipeline to production after smoke tests.",
    "Deploy pipeline {n}: bumped the image tag and redeployed the web service.",
    "Routine deploy {n}: pipeline finished in 7 minutes, canary looked healthy.",
    "Updated deploy/pipeline.yaml step {n} to cache node_modules between runs.",
    "Deploy pipeline run {n} rolled out the worker service to two regions.",
    "Pipeline {n}: deploy of the API went out behind a feature flag.",
    "Deployed hotfix {n} with the usual pipeline; no incidents.",
];

/// Distinct routine notes.
pub const DISTINCT_ROUTINE: usize = ROUTINE.len() * 40;

/// Routine note `i` (it repeats every `DISTINCT_ROUTINE`).
pub fn routine_note(i: usize) -> String {
    ROUTINE[i % ROUTINE.len()].replace("{n}", &(i % 40).to_string())
}
