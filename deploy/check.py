"""Checks the deployment files with the real tools, offline.

Run with the venv scripts/tools/helm.sh makes:
    ~/.cache/cairn-tools/helm/bin/python deploy/check.py [repo root]

- Helm (Helm 4's Go SDK, through helm-python-sdk): `helm lint --strict`,
  values.schema.json, and `helm template` of several value sets; values that
  must be refused are refused.
- kubernetes-validate: every rendered manifest of a built-in kind against
  Kubernetes' own OpenAPI schemas, strict (unknown fields are errors).
- docker-compose (Debian's Compose v1) `config -q`, with and without the
  metrics profile, and check-jsonschema: docker-compose.yml against the
  Compose specification.
- dockerfile (BuildKit's parser): the Dockerfile parses.

Exits 1 on the first failure with a message; on success prints one JSON
object on stdout: {"renders": {scenario: [manifest, ...]}, "dockerfile":
[[instruction, [args], [flags]], ...]} for crates/shared/tests/deploy.rs
to inspect.
"""

import json
import subprocess
import sys
from pathlib import Path

import dockerfile
import helm_python as helm
import kubernetes_validate
import yaml

KUBERNETES_VERSION = "1.33.0"
# Kinds Kubernetes does not define (KEDA's CRDs): checked by the Rust test.
CUSTOM_KINDS = {"ScaledObject", "TriggerAuthentication"}

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
CHART = ROOT / "deploy" / "helm" / "cairn"

SECRETS = {
    "databaseUrl": "postgres://cairn:pw@postgres:5432/cairn",
    "redisUrl": "redis://redis:6379",
    "jwtSecret": "0123456789abcdef0123456789abcdef",
}

SCENARIOS = {
    "defaults": {"secrets": SECRETS},
    "everything": {
        "secrets": {**SECRETS, "providerApiKey": "sk-ant-test"},
        "api": {"ingress": {"enabled": True, "className": "nginx", "tls": {"enabled": True}}},
        "generator": {
            "provider": "anthropic",
            "keda": {"enabled": True, "scaler": "postgresql"},
        },
        "config": {"extraEnv": [{"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel:4318"}]},
    },
    "existing-secret": {
        "secrets": {"existingSecret": "cairn-managed"},
        "migrations": {"enabled": False},
        "config": {"metricsPort": 0},
        "api": {"pdb": {"enabled": False}},
        "generator": {
            "provider": "openai",
            "openaiBaseUrl": "http://ollama:11434/v1",
            "openaiModel": "llama3.1:8b",
            "openaiNeedsKey": True,
            "pdb": {"enabled": False},
            "keda": {"enabled": True, "scaler": "prometheus"},
        },
    },
}

# Values the chart must refuse, and a word the refusal must contain.
REFUSED = {
    "no secrets": ({}, "secrets.databaseUrl"),
    "short JWT secret": ({"secrets": {**SECRETS, "jwtSecret": "short"}}, "jwtSecret"),
    "unknown provider": ({"secrets": SECRETS, "generator": {"provider": "gpt"}}, "provider"),
    "API grace under the request deadline": (
        {"secrets": SECRETS, "api": {"terminationGracePeriodSeconds": 30}},
        "terminationGracePeriodSeconds",
    ),
    "misspelt key": ({"secrets": SECRETS, "api": {"replica": 3}}, "replica"),
    "openai without a base URL": ({"secrets": SECRETS, "generator": {"provider": "openai"}}, "openaiBaseUrl"),
}


def fail(message):
    print(f"deploy check: {message}", file=sys.stderr)
    sys.exit(1)


def render(values):
    with helm.Chart.load(str(CHART)) as chart:
        chart.validate_schema(values)
        manifests = chart.render(values, name="cairn", namespace="cairn", is_install=True)
    documents = []
    for path, text in sorted(manifests.items()):
        if not path.endswith(".yaml"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                documents.append(doc)
    return documents


def check_helm():
    for name, values in SCENARIOS.items():
        report = helm.lint(str(CHART), values, strict=True, kube_version=f"v{KUBERNETES_VERSION}")
        problems = [m for m in report.get("messages", []) if m.get("severity", 0) >= 2] + report.get("errors", [])
        if problems:
            fail(f"helm lint --strict ({name}): {problems}")
    renders = {}
    for name, values in SCENARIOS.items():
        try:
            documents = render(values)
        except Exception as e:  # noqa: BLE001 - the SDK's errors all say what failed
            fail(f"helm template ({name}): {e}")
        for doc in documents:
            if doc.get("kind") in CUSTOM_KINDS:
                continue
            try:
                kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
            except kubernetes_validate.ValidationError as e:
                fail(f"{name}: {doc.get('kind')} {doc['metadata'].get('name')}: {e.message} at {list(e.path)}")
        renders[name] = documents
    for name, (values, word) in REFUSED.items():
        try:
            render(values)
        except Exception as e:  # noqa: BLE001
            if word not in str(e):
                fail(f"refused for the wrong reason ({name}): {e}")
            continue
        fail(f"values that must be refused were rendered ({name})")
    return renders


def check_compose():
    # Debian's docker-compose (Compose v1, 1.29) resolves the file as Compose
    # would: anchors and merges, interpolation, references, conditions.
    for profile in ([], ["--profile", "metrics"]):
        run = subprocess.run(
            ["docker-compose", "--project-directory", str(ROOT), "-f", str(ROOT / "docker-compose.yml"), *profile, "config", "-q"],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin:/usr/local/bin", "CAIRN_SECRETS_DIR": "/nonexistent"},
        )
        if run.returncode != 0:
            fail(f"docker-compose {' '.join(profile)} config -q:\n{run.stdout}{run.stderr}")
    checker = Path(sys.executable).parent / "check-jsonschema"
    run = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        fail(f"docker-compose.yml against the Compose spec:\n{run.stdout}{run.stderr}")


def check_dockerfile():
    try:
        commands = dockerfile.parse_file(str(ROOT / "Dockerfile"))
    except dockerfile.GoParseError as e:
        fail(f"Dockerfile: {e}")
    return [[c.cmd, list(c.value), list(c.flags)] for c in commands]


def main():
    renders = check_helm()
    check_compose()
    instructions = check_dockerfile()
    json.dump({"renders": renders, "dockerfile": instructions}, sys.stdout)


if __name__ == "__main__":
    main()
