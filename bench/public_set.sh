#!/usr/bin/env bash
# Recall on a public question set: Cairn's search (hybrid, lexical,
# vector) against a textbook Okapi BM25, on the same passages.
#
# The set: the Python FAQ (docs.python.org/3/faq, PSF licence) as shipped
# in Debian's python3.X-doc package. Each FAQ entry's heading is a question
# (the query); the entry's text, cut into passages, is what must be found
# (qrels); every other section of the Python documentation, cut the same
# way, is a distractor. Questions alternate between qrels/dev.tsv and
# qrels/test.tsv (for --tune). The files are in BEIR's layout (corpus.jsonl,
# queries.jsonl, qrels/*.tsv), so a BEIR set unpacked elsewhere runs too:
# `public_recall --data DIR`.
#
# Downloads the package once into ~/.cache/cairn/public-set/ (apt-get
# download: no root needed, nothing installed), converts it, builds and
# runs the bench. Extra arguments go to the bench (--tune, --max-docs N).
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${CAIRN_PUBLIC_SET_DIR:-$HOME/.cache/cairn/public-set}"
DATA="$CACHE/python-faq"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn-target}"
mkdir -p "$CACHE"

if [ ! -s "$DATA/corpus.jsonl" ]; then
  # python3-doc depends on the distribution's python3.X-doc.
  pkg="$(apt-cache depends python3-doc 2>/dev/null | grep -o 'python3\.[0-9]*-doc' | head -1)"
  if [ -z "$pkg" ]; then
    echo "python3-doc is not known to apt (run apt-get update)" >&2
    exit 1
  fi
  (cd "$CACHE" && rm -f ./*.deb && apt-get download "$pkg")
  deb="$(ls "$CACHE"/*.deb | head -1)"
  rm -rf "$CACHE/x" && mkdir -p "$CACHE/x"
  dpkg-deb -x "$deb" "$CACHE/x"
  src="$(ls -d "$CACHE"/x/usr/share/doc/python3*/html/_sources | head -1)"
  rm -rf "$DATA" && mkdir -p "$DATA/qrels"
  echo "source: $(basename "$deb")" > "$DATA/SOURCE"
  python3 - "$src" "$DATA" <<'EOF'
import json, os, re, sys

src, out = sys.argv[1], sys.argv[2]
UNDER = re.compile(r'^([=\-~^*+#"\'`:.])\1{2,}\s*$')
MAX = 600  # characters a passage: observation-sized

def sections(path):
    """(page title, heading, body) per section of one reST file."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out, page, head, body, i = [], None, None, [], 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        over = UNDER.match(line) and i + 2 < len(lines) and UNDER.match(lines[i + 2]) and lines[i + 1].strip()
        if over:
            title, step = lines[i + 1].strip(), 3
        elif line.strip() and not UNDER.match(line) and UNDER.match(nxt) and len(nxt.strip()) >= len(line.strip()) - 2:
            title, step = line.strip(), 2
        else:
            body.append(line)
            i += 1
            continue
        out.append((page, head, body))
        page = page or title
        head, body = title, []
        i += step
    out.append((page, head, body))
    return [(p or "", h or "", b) for p, h, b in out]

def clean(lines):
    text, skip = [], False
    for line in lines:
        s = line.strip()
        if s.startswith(".. ") and not s.startswith(".. code") and "::" in s:
            skip = s.split("::")[0][3:] in ("only", "contents", "toctree", "index", "highlight", "sectionauthor", "moduleauthor", "module", "currentmodule")
            if skip:
                continue
        if skip and (not s or line.startswith(" ")):
            continue
        skip = False
        text.append(line)
    t = "\n".join(text)
    t = re.sub(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", t)  # :func:`x` -> x
    t = re.sub(r"`([^`<]+?)\s*<[^>]+>`_+", r"\1", t)  # `text <url>`_ -> text
    t = t.replace("``", "")
    return t.strip()

def passages(text):
    """Paragraphs packed into passages of at most MAX characters."""
    out, cur = [], ""
    for para in re.split(r"\n\s*\n", text):
        para = re.sub(r"\s+", " ", para).strip()
        while len(para) > MAX:
            cut = para.rfind(" ", 0, MAX)
            cut = cut if cut > MAX // 2 else MAX
            if cur:
                out.append(cur)
                cur = ""
            out.append(para[:cut])
            para = para[cut:].strip()
        if not para:
            continue
        if cur and len(cur) + 1 + len(para) > MAX:
            out.append(cur)
            cur = ""
        cur = (cur + "\n" + para) if cur else para
    if cur:
        out.append(cur)
    return [p for p in out if len(p) >= 40]

docs, queries, qrels = [], [], []
files = []
for root, _, names in os.walk(src):
    for n in names:
        if n.endswith(".rst.txt"):
            files.append(os.path.join(root, n))
files.sort()
for path in files:
    rel = os.path.relpath(path, src)[: -len(".rst.txt")]
    if rel.startswith(("whatsnew/", "includes/")) or rel in ("license", "copyright", "contents", "glossary"):
        continue
    faq = rel.startswith("faq/")
    for k, (page, head, body) in enumerate(sections(path)):
        parts = passages(clean(body))
        if not parts:
            continue
        ids = []
        for j, p in enumerate(parts):
            did = f"{rel}#{k}.{j}"
            docs.append({"_id": did, "title": page, "text": p})
            ids.append(did)
        if faq and head.endswith("?"):
            qid = f"q{len(queries)}"
            queries.append({"_id": qid, "text": head})
            qrels.append((qid, ids))

with open(os.path.join(out, "corpus.jsonl"), "w") as f:
    for d in docs:
        f.write(json.dumps(d) + "\n")
with open(os.path.join(out, "queries.jsonl"), "w") as f:
    for q in queries:
        f.write(json.dumps(q) + "\n")
for split, parity in (("dev", 0), ("test", 1)):
    with open(os.path.join(out, "qrels", f"{split}.tsv"), "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for n, (qid, ids) in enumerate(qrels):
            if n % 2 == parity:
                for did in ids:
                    f.write(f"{qid}\t{did}\t1\n")
print(f"converted: {len(docs)} passages, {len(queries)} questions", file=sys.stderr)
EOF
fi

cat "$DATA/SOURCE"
cargo build --release -q -p cairn-bench --bin public_recall
"$CARGO_TARGET_DIR/release/public_recall" --data "$DATA" "$@"
