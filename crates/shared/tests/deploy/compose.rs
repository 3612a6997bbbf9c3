//! docker-compose.yml, .env.example, .dockerignore and the Dockerfile.

use std::{collections::BTreeSet, time::Duration};

use serde_norway::Value;

use crate::support::{at, checked, compose_duration, millis_default, read, root, str_at, yaml};

fn services() -> Vec<(String, Value)> {
    let compose = yaml("docker-compose.yml");
    at(&compose, &["services"])
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_string(), v.clone()))
        .collect()
}

fn service(name: &str) -> Value {
    services()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no service {name}"))
        .1
}

fn healthcheck_test(service: &Value) -> Vec<String> {
    at(service, &["healthcheck", "test"])
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_service_restarts_and_has_a_health_check() {
    for (name, service) in services() {
        assert_eq!(str_at(&service, &["restart"]), "unless-stopped", "{name}");
        assert!(
            !healthcheck_test(&service).is_empty(),
            "{name} has no health check"
        );
    }
    let expected: [(&str, &[&str]); 4] = [
        ("postgres", &["CMD-SHELL", "pg_isready -U cairn -d cairn"]),
        ("redis", &["CMD", "redis-cli", "ping"]),
        (
            "api",
            &["CMD", "cairn-api", "health", "--url", "http://127.0.0.1:8080"],
        ),
        ("generator", &["CMD", "cairn-generator", "health"]),
    ];
    for (name, test) in expected {
        assert_eq!(healthcheck_test(&service(name)), test, "{name}");
    }
    assert!(
        str_at(&service("postgres"), &["image"]).starts_with("pgvector/pgvector:pg"),
        "Postgres with pgvector"
    );
}

#[test]
fn dependencies_wait_for_health_and_have_health_checks() {
    let all = services();
    let mut edges = 0;
    for (name, service) in &all {
        let Some(depends) = service.get("depends_on") else {
            continue;
        };
        let depends = depends
            .as_mapping()
            .unwrap_or_else(|| panic!("{name}: depends_on must be a map with conditions"));
        for (dependency, how) in depends {
            let dependency = dependency.as_str().unwrap();
            assert_eq!(
                str_at(how, &["condition"]),
                "service_healthy",
                "{name} → {dependency}"
            );
            let target = &all.iter().find(|(n, _)| n == dependency).unwrap().1;
            assert!(
                target.get("healthcheck").is_some(),
                "{dependency} has no health check"
            );
            edges += 1;
        }
    }
    let generator = service("generator");
    for dependency in ["postgres", "redis", "api"] {
        assert!(
            at(&generator, &["depends_on"]).get(dependency).is_some(),
            "generator → {dependency}"
        );
    }
    assert!(edges >= 7, "{edges} depends_on edges");
}

#[test]
fn the_api_grace_period_outlasts_its_longest_wait() {
    let config = read("services/api/src/config.rs");
    let longest = [
        "CAIRN_REQUEST_TIMEOUT_MS",
        "CAIRN_BODY_READ_TIMEOUT_MS",
        "CAIRN_HEADER_READ_TIMEOUT_MS",
        "CAIRN_MAX_WAIT_MS",
    ]
    .into_iter()
    .map(|name| millis_default(&config, name))
    .max()
    .unwrap();
    assert_eq!(
        longest,
        Duration::from_secs(60),
        "the README's figure: update it with the grace"
    );
    let grace = compose_duration(str_at(&service("api"), &["stop_grace_period"]));
    assert!(grace > longest, "api stop_grace_period {grace:?} ≤ {longest:?}");

    let drain_default = millis_default(
        &read("services/generator/src/config.rs"),
        "CAIRN_DRAIN_TIMEOUT_MS",
    );
    let generator = service("generator");
    let drain = str_at(&generator, &["environment", "CAIRN_DRAIN_TIMEOUT_MS"])
        .parse::<u64>()
        .map(Duration::from_millis)
        .unwrap();
    assert_eq!(drain, drain_default);
    let grace = compose_duration(str_at(&generator, &["stop_grace_period"]));
    assert!(
        grace > drain,
        "generator stop_grace_period {grace:?} ≤ drain {drain:?}"
    );
}

#[test]
fn secrets_are_files_mounted_where_their_variables_point() {
    let compose = yaml("docker-compose.yml");
    let declared: BTreeSet<String> = at(&compose, &["secrets"])
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    let make_secrets = read("deploy/make-secrets.sh");
    for name in &declared {
        assert!(
            make_secrets.contains(&format!("write {name} "))
                || make_secrets.contains(&format!("$dir/{name}\"")),
            "deploy/make-secrets.sh does not create {name}"
        );
    }
    let mut file_variables = 0;
    for (name, service) in services() {
        let mounted: BTreeSet<String> = service
            .get("secrets")
            .and_then(Value::as_sequence)
            .map(|s| s.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        assert!(mounted.is_subset(&declared), "{name} mounts an undeclared secret");
        let Some(environment) = service.get("environment").and_then(Value::as_mapping) else {
            continue;
        };
        for (key, value) in environment {
            let key = key.as_str().unwrap();
            let value = value.as_str().unwrap_or_default();
            assert!(
                !["CAIRN_JWT_SECRET", "CAIRN_DATABASE_URL", "POSTGRES_PASSWORD"].contains(&key),
                "{name}: {key} is set in plain text; use {key}_FILE"
            );
            if let Some(secret) = value.strip_prefix("/run/secrets/") {
                assert!(key.ends_with("_FILE"), "{name}: {key}");
                assert!(
                    mounted.contains(secret),
                    "{name}: {key} points at {secret}, which is not mounted"
                );
                file_variables += 1;
            }
        }
    }
    assert!(
        file_variables >= 4,
        "{file_variables} variables read from secret files"
    );
    let api = service("api");
    assert_eq!(
        str_at(&api, &["environment", "CAIRN_JWT_SECRET_FILE"]),
        "/run/secrets/jwt_secret"
    );
}

#[test]
fn every_variable_compose_uses_is_in_env_example_with_a_comment() {
    let compose = read("docker-compose.yml");
    let example = read(".env.example");
    let used: BTreeSet<&str> = compose
        .match_indices("${")
        .map(|(i, _)| {
            let rest = &compose[i + 2..];
            let end = rest.find([':', '}', '-', '?']).unwrap();
            &rest[..end]
        })
        .collect();
    assert!(used.len() >= 10, "{used:?}");
    let lines: Vec<&str> = example.lines().collect();
    for variable in &used {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("{variable}=")))
            .unwrap_or_else(|| panic!(".env.example lacks {variable}"));
        assert!(
            at > 0 && lines[at - 1].starts_with("# "),
            "{variable} has no comment above it"
        );
    }
    for line in lines.iter().filter(|l| l.contains('=') && !l.starts_with('#')) {
        let name = line.split('=').next().unwrap();
        assert!(
            used.contains(name),
            ".env.example sets {name}, which compose does not use"
        );
    }
}

#[test]
fn the_metrics_profile_scrapes_both_services_and_ships_the_dashboard() {
    for name in ["prometheus", "grafana"] {
        let service = service(name);
        let profiles = at(&service, &["profiles"]).as_sequence().unwrap();
        assert_eq!(profiles.len(), 1);
        assert_eq!(profiles[0].as_str(), Some("metrics"), "{name}");
    }
    for (name, service) in services() {
        if ["prometheus", "grafana"].contains(&name.as_str()) {
            continue;
        }
        assert!(
            service.get("profiles").is_none(),
            "{name} must start without a profile"
        );
        for volume in service
            .get("volumes")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            let host = volume.as_str().unwrap().split(':').next().unwrap();
            if host.starts_with("./") {
                assert!(root().join(host).exists(), "{name} mounts missing {host}");
            }
        }
    }
    for name in ["prometheus", "grafana"] {
        for volume in at(&service(name), &["volumes"]).as_sequence().unwrap() {
            let host = volume.as_str().unwrap().split(':').next().unwrap();
            if host.starts_with("./") {
                assert!(root().join(host).exists(), "{name} mounts missing {host}");
            }
        }
    }
    let metrics_addr = str_at(&service("api"), &["environment", "CAIRN_METRICS_ADDR"]).to_string();
    let port: u64 = metrics_addr.rsplit(':').next().unwrap().parse().unwrap();
    let prometheus = yaml("deploy/prometheus/prometheus.yml");
    let mut scraped = BTreeSet::new();
    for job in at(&prometheus, &["scrape_configs"]).as_sequence().unwrap() {
        for sd in at(job, &["dns_sd_configs"]).as_sequence().unwrap() {
            assert_eq!(at(sd, &["port"]).as_u64(), Some(port));
            for name in at(sd, &["names"]).as_sequence().unwrap() {
                scraped.insert(name.as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(
        scraped,
        BTreeSet::from(["api".to_string(), "generator".to_string()])
    );
    // Prometheus scrapes every container that serves metrics; both set the same address.
    assert_eq!(
        str_at(&service("generator"), &["environment", "CAIRN_METRICS_ADDR"]),
        metrics_addr
    );
}

#[test]
fn the_containers_run_read_only_without_privileges() {
    for name in ["api", "generator"] {
        let service = service(name);
        assert_eq!(at(&service, &["read_only"]).as_bool(), Some(true), "{name}");
        let tmpfs = at(&service, &["tmpfs"]).as_sequence().unwrap();
        assert!(
            tmpfs.iter().any(|t| t.as_str() == Some("/tmp")),
            "{name}: the liveness file lives in /tmp"
        );
        let caps = at(&service, &["cap_drop"]).as_sequence().unwrap();
        assert!(caps.iter().any(|c| c.as_str() == Some("ALL")), "{name}");
    }
    let generator = service("generator");
    assert!(str_at(&generator, &["environment", "CAIRN_LIVENESS_FILE"]).starts_with("/tmp/"));
}

#[test]
fn dockerignore_keeps_build_output_and_history_out() {
    let ignore = read(".dockerignore");
    let lines: BTreeSet<&str> = ignore.lines().map(str::trim).collect();
    for entry in [
        "target/",
        ".git/",
        ".cairn/",
        "bench/out/",
        "**/node_modules/",
        "secrets/",
    ] {
        assert!(lines.contains(entry), ".dockerignore lacks {entry}");
    }
}

#[test]
fn the_dockerfile_caches_dependencies_and_runs_unprivileged() {
    let lines = &checked().dockerfile;
    let position = |cmd: &str, first_arg: &str| {
        lines
            .iter()
            .position(|(c, args, _)| c == cmd && args.first().is_some_and(|a| a.contains(first_arg)))
            .unwrap_or_else(|| panic!("no {cmd} {first_arg}"))
    };
    // Dependencies are cooked from the recipe before the sources are copied in.
    let cook = position("RUN", "cargo chef cook");
    let sources = lines
        .iter()
        .enumerate()
        .skip(cook)
        .find(|(_, (c, args, _))| c == "COPY" && args == &[".", "."])
        .map(|(i, _)| i)
        .expect("COPY . . after the cook");
    let build = position("RUN", "cargo build --release");
    assert!(cook < sources && sources < build);
    for binary in ["cairn-api", "cairn-generator", "target/release/cairn "] {
        assert!(
            lines[build].1[0].contains(binary),
            "the build copies out {binary}"
        );
    }
    let last_from = lines.iter().rposition(|(c, _, _)| c == "FROM").unwrap();
    let final_stage = &lines[last_from..];
    let user = final_stage
        .iter()
        .find(|(c, _, _)| c == "USER")
        .expect("USER in the final stage");
    let uid: u32 = user.1[0]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .expect("a numeric user");
    assert!(uid > 0);
    assert!(final_stage.iter().any(|(c, args, flags)| c == "COPY"
        && flags.contains(&"--from=build".to_string())
        && args[1] == "/usr/local/bin/"));
    let model_arg = lines
        .iter()
        .any(|(c, args, _)| c == "ARG" && args[0] == "CAIRN_WITH_MODEL=0");
    assert!(model_arg, "the embedding model is optional and off by default");
}
