//! What `helm template` renders (through deploy/check.py, which has already
//! linted it strictly and validated each manifest against Kubernetes'
//! schemas), and the KEDA scaler's query run against a migrated database.

use serde_json::{Value, json};

use crate::support::{at, checked, str_at, yaml};

fn render(scenario: &str) -> &'static Vec<Value> {
    checked().renders[scenario]
        .as_array()
        .unwrap_or_else(|| panic!("no render for {scenario}"))
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

fn env<'a>(container: &'a Value, name: &str) -> Option<&'a str> {
    container["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
}

#[test]
fn the_defaults_render_the_api_generator_migration_secret_and_budgets() {
    let docs = render("defaults");
    let mut kinds: Vec<String> = docs
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_string())
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "Deployment",
            "Deployment",
            "Job",
            "PodDisruptionBudget",
            "PodDisruptionBudget",
            "Secret",
            "Service"
        ]
    );

    let api = find(docs, "Deployment", "cairn-api");
    let c = container(api);
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/api/readiness");
    assert_eq!(c["startupProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(
        env(c, "CAIRN_JWT_SECRET_FILE"),
        Some("/run/secrets/cairn/jwt-secret")
    );
    assert_eq!(
        env(c, "CAIRN_DATABASE_URL_FILE"),
        Some("/run/secrets/cairn/database-url")
    );
    assert!(env(c, "CAIRN_JWT_SECRET").is_none() && env(c, "CAIRN_DATABASE_URL").is_none());
    assert!(
        api["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
            .as_u64()
            .unwrap()
            > 60
    );

    let generator = find(docs, "Deployment", "cairn-generator");
    let c = container(generator);
    assert_eq!(
        c["livenessProbe"]["exec"]["command"],
        json!(["cairn-generator", "health"])
    );
    assert_eq!(env(c, "CAIRN_LIVENESS_FILE"), Some("/tmp/cairn-generator.alive"));
    assert_eq!(env(c, "CAIRN_PROVIDER"), Some("heuristic"));
    let drain_ms: u64 = env(c, "CAIRN_DRAIN_TIMEOUT_MS").unwrap().parse().unwrap();
    let grace = generator["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        .as_u64()
        .unwrap();
    assert!(
        grace * 1000 > drain_ms,
        "generator grace {grace}s ≤ drain {drain_ms}ms"
    );

    for deployment in [api, generator] {
        let pod = &deployment["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        let c = container(deployment);
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        assert!(c["resources"]["requests"]["memory"].is_string());
        let mounts: Vec<&str> = c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mountPath"].as_str().unwrap())
            .collect();
        assert!(
            mounts.contains(&"/tmp") && mounts.contains(&"/run/secrets/cairn"),
            "{mounts:?}"
        );
    }

    let job = find(docs, "Job", "cairn-migrate");
    assert_eq!(container(job)["command"], json!(["cairn", "admin", "migrate"]));
    let hook = &job["metadata"]["annotations"];
    assert_eq!(hook["helm.sh/hook"], "pre-install,pre-upgrade");
    let secret = find(docs, "Secret", "cairn-secrets");
    let weight = |d: &Value| {
        d["metadata"]["annotations"]["helm.sh/hook-weight"]
            .as_str()
            .unwrap()
            .parse::<i32>()
            .unwrap()
    };
    assert!(
        weight(secret) < weight(job),
        "the Secret exists before the migration hook runs"
    );
    for key in ["database-url", "redis-url", "jwt-secret"] {
        assert!(secret["stringData"][key].is_string(), "secret lacks {key}");
    }

    let api_pdb = find(docs, "PodDisruptionBudget", "cairn-api");
    assert_eq!(api_pdb["spec"]["minAvailable"], 1);
    assert_eq!(
        api_pdb["spec"]["selector"]["matchLabels"],
        api["spec"]["selector"]["matchLabels"]
    );
}

#[test]
fn everything_on_renders_ingress_keda_and_a_provider_key() {
    let docs = render("everything");
    let ingress = find(docs, "Ingress", "cairn-api");
    assert_eq!(
        ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "cairn-api"
    );
    assert!(ingress["spec"]["tls"].is_array());

    let scaled = find(docs, "ScaledObject", "cairn-generator");
    assert_eq!(scaled["apiVersion"], "keda.sh/v1alpha1");
    assert_eq!(scaled["spec"]["scaleTargetRef"]["name"], "cairn-generator");
    let trigger = &scaled["spec"]["triggers"][0];
    assert_eq!(trigger["type"], "postgresql");
    let values = yaml("deploy/helm/cairn/values.yaml");
    assert_eq!(
        trigger["metadata"]["query"].as_str(),
        Some(str_at(&values, &["generator", "keda", "postgresql", "query"]))
    );
    let auth = find(docs, "TriggerAuthentication", "cairn-generator-postgres");
    assert_eq!(trigger["authenticationRef"]["name"], auth["metadata"]["name"]);
    assert_eq!(auth["spec"]["secretTargetRef"][0]["key"], "database-url");

    let generator = find(docs, "Deployment", "cairn-generator");
    assert!(
        generator["spec"].get("replicas").is_none(),
        "KEDA owns the replica count"
    );
    let c = container(generator);
    assert_eq!(
        env(c, "CAIRN_ANTHROPIC_API_KEY_FILE"),
        Some("/run/secrets/cairn/provider-api-key")
    );
    assert_eq!(env(c, "OTEL_EXPORTER_OTLP_ENDPOINT"), Some("http://otel:4318"));
    // The API answers asks with the same model and key.
    let c = container(find(docs, "Deployment", "cairn-api"));
    assert_eq!(env(c, "CAIRN_PROVIDER"), Some("anthropic"));
    assert_eq!(
        env(c, "CAIRN_ANTHROPIC_API_KEY_FILE"),
        Some("/run/secrets/cairn/provider-api-key")
    );
}

#[test]
fn an_existing_secret_replaces_the_charts_own() {
    let docs = render("existing-secret");
    assert!(docs.iter().all(|d| d["kind"] != "Secret" && d["kind"] != "Job"));
    let api = find(docs, "Deployment", "cairn-api");
    let volumes = api["spec"]["template"]["spec"]["volumes"].as_array().unwrap();
    assert!(
        volumes
            .iter()
            .any(|v| v["secret"]["secretName"] == "cairn-managed")
    );
    assert!(
        env(container(api), "CAIRN_METRICS_ADDR").is_none(),
        "metricsPort 0 turns metrics off"
    );
    let scaled = find(docs, "ScaledObject", "cairn-generator");
    assert_eq!(scaled["spec"]["triggers"][0]["type"], "prometheus");
    let generator = container(find(docs, "Deployment", "cairn-generator"));
    assert_eq!(
        env(generator, "CAIRN_OPENAI_API_KEY_FILE"),
        Some("/run/secrets/cairn/provider-api-key")
    );
}

/// KEDA runs the chart's query as is: it must run against Cairn's schema and
/// count due and running jobs only.
#[tokio::test]
async fn the_keda_query_counts_due_and_running_jobs_in_a_migrated_database() {
    use sqlx::{Connection, PgConnection};
    let admin_url = std::env::var("CAIRN_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let name = format!("cairn_test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&admin_url)
        .await
        .expect("CAIRN_TEST_DATABASE_URL");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    let url = format!("{}/{name}", admin_url.rsplit_once('/').unwrap().0);
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    cairn_shared::db::run_migrations(&pool).await.unwrap();

    let (team, project) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
    sqlx::query("INSERT INTO teams (id, slug, name) VALUES ($1, 'keda', 'KEDA')")
        .bind(team)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO projects (id, team_id, slug, name) VALUES ($1, $2, 'keda', 'KEDA')")
        .bind(project)
        .bind(team)
        .execute(&pool)
        .await
        .unwrap();
    // due, due, later, running, running, done, out of attempts
    let rows = [
        ("queued", "now() - interval '1 minute'", "NULL, NULL", "NULL", 0),
        ("queued", "now()", "NULL, NULL", "NULL", 0),
        ("queued", "now() + interval '1 hour'", "NULL, NULL", "NULL", 0),
        (
            "processing",
            "now()",
            "'w:0', now() + interval '1 minute'",
            "NULL",
            1,
        ),
        (
            "processing",
            "now()",
            "'w:1', now() + interval '1 minute'",
            "NULL",
            1,
        ),
        ("completed", "now()", "NULL, NULL", "now()", 1),
        ("queued", "now()", "NULL, NULL", "NULL", 5),
    ];
    for (i, (status, due, lock, completed, attempts)) in rows.into_iter().enumerate() {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO generation_jobs (id, team_id, project_id, job_type, source_type, status,
                 next_attempt_at, locked_by, lease_expires_at, completed_at, attempts, idempotency_key)
             VALUES (gen_random_uuid(), $1, $2, 'session_summary', 'session', '{status}',
                 {due}, {lock}, {completed}, {attempts}, 'keda-{i}')"
        )))
        .bind(team)
        .bind(project)
        .execute(&pool)
        .await
        .unwrap();
    }
    let values = yaml("deploy/helm/cairn/values.yaml");
    let query = str_at(&values, &["generator", "keda", "postgresql", "query"]).to_string();
    let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(query))
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(count, 4, "two due and two running");
    assert!(at(&values, &["generator", "keda", "target"]).as_u64().unwrap() >= 1);

    pool.close().await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
}
