#!/usr/bin/env bash
# Installs the checkers the deploy test (crates/shared/tests/deploy.rs) drives,
# into a venv at $HOME/.cache/cairn-tools/helm with pip; silent when there:
#   helm-python-sdk      Helm 4's own Go SDK built as a C library (no helm
#                        binary is published on the registries reached here):
#                        lint, render, values.schema.json validation
#   kubernetes-validate  the rendered manifests against Kubernetes' schemas
#   check-jsonschema     docker-compose.yml against the Compose spec schema
#   dockerfile           the Dockerfile through BuildKit's own parser
#   docker-compose       Debian's Compose v1 (apt), for `docker-compose config -q`
# deploy/check.py is the driver.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v docker-compose >/dev/null 2>&1; then
    echo "installing docker-compose with apt" >&2
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi

venv="$HOME/.cache/cairn-tools/helm"
want=(helm-python-sdk==0.2.2 kubernetes-validate==1.37.0 check-jsonschema==0.39.0 dockerfile==3.4.0)

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import helm_python, kubernetes_validate, check_jsonschema, dockerfile' 2>/dev/null; then
    exit 0
fi
echo "installing helm-python-sdk, kubernetes-validate, check-jsonschema and dockerfile into $venv" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${want[@]}" >/dev/null
