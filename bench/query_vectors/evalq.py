# Usage: evalq.py tokenizer.json table.f16 name... : mean cosine of static and model vectors of each name.txt
import sys, numpy as np
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1]); tok.no_padding(); tok.no_truncation()
E = np.fromfile(sys.argv[2], dtype="<f2").astype(np.float32).reshape(-1, 384)
for name in sys.argv[3:]:
    lines = open(name + ".txt").read().split("\n")[:-1]
    Y = np.fromfile(name + ".f32", dtype="<f4").reshape(-1, 384)
    cs = []
    for l, y in zip(lines, Y):
        ids = tok.encode(l, add_special_tokens=False).ids
        v = E[ids].sum(0); v /= max(np.linalg.norm(v), 1e-12); cs.append(v @ y)
    print(name, f"{np.mean(cs):.3f} p10 {np.percentile(cs,10):.3f}", len(cs))
