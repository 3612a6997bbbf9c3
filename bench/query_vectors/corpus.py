# Usage: corpus.py N > corpus.txt (doc comments of the crates in ~/.cargo/registry/src)
# Builds a corpus of developer prose from Rust doc comments in the cargo registry:
# sentences, and random word spans of them (queries are short).
import os, re, random, sys
random.seed(7)
root = os.path.expanduser("~/.cargo/registry/src")
paras = []
for dirpath, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".rs"): continue
        try:
            text = open(os.path.join(dirpath, f), encoding="utf-8", errors="ignore").read()
        except Exception: continue
        cur, incode = [], False
        for line in text.splitlines():
            s = line.strip()
            if s.startswith("///") or s.startswith("//!"):
                body = s[3:].strip()
                if body.startswith("```"):
                    incode = not incode; continue
                if incode or body.startswith("#") or body.startswith("|"): continue
                if body: cur.append(body); continue
            if cur: paras.append(" ".join(cur)); cur = []
        if cur: paras.append(" ".join(cur))
sents = set()
for p in paras:
    p = re.sub(r"\[`?([^\]`]+)`?\]\([^)]*\)", r"\1", p)
    p = re.sub(r"\[`?([^\]`]+)`?\]", r"\1", p)
    p = p.replace("`", "")
    for s in re.split(r"(?<=[.!?])\s+", p):
        w = s.split()
        if 3 <= len(w) <= 40 and sum(c.isalpha() for c in s) > 0.6 * len(s):
            sents.add(s)
sents = sorted(sents)
random.shuffle(sents)
print(len(paras), "paragraphs", len(sents), "sentences", file=sys.stderr)
n = int(sys.argv[1])
out = []
for s in sents[: n // 2]:
    out.append(s)
for s in sents[n // 2 : n]:
    w = s.split()
    k = random.choice([1, 2, 2, 3, 3, 4, 5, 6, 8])
    k = min(k, len(w))
    i = random.randrange(0, len(w) - k + 1)
    out.append(" ".join(w[i : i + k]))
random.shuffle(out)
sys.stdout.write("\n".join(x.replace("\n", " ") for x in out) + "\n")
