# Usage: solve.py tokenizer.json name1,name2 out.f16 lambda (each name: name.txt lines, name.f32 model vectors)
# Fits static token vectors so that the mean of a text's token rows matches the
# model's sentence vector (ridge least squares, block conjugate gradient).
import sys, numpy as np, scipy.sparse as sp
from tokenizers import Tokenizer
D = 384
tok = Tokenizer.from_file(sys.argv[1])
tok.no_padding(); tok.no_truncation()
lines, Ys = [], []
for name in sys.argv[2].split(","):
    l = open(name + ".txt").read().split("\n")[:-1]
    y = np.fromfile(name + ".f32", dtype="<f4").reshape(-1, D)
    lines += l[: len(y)]; Ys.append(y)
Y = np.concatenate(Ys)
lam = float(sys.argv[4])
V = tok.get_vocab_size()
enc = tok.encode_batch(lines, add_special_tokens=False)
rows, cols, vals = [], [], []
for i, e in enumerate(enc):
    ids = e.ids[:256] or [100]
    w = 1.0 / len(ids)
    for t in ids:
        rows.append(i); cols.append(t); vals.append(w)
A = sp.csr_matrix((vals, (rows, cols)), shape=(len(lines), V))
n = len(lines)
hold = np.arange(n) % 20 == 0
Atr, Ytr = A[~hold], Y[~hold]
M = (Atr.T @ Atr).tocsr()
B = Atr.T @ Ytr
def op(X): return M @ X + lam * X
X = np.zeros((V, D), dtype=np.float64)
R = B - op(X); P = R.copy(); rs = (R * R).sum(0)
for it in range(300):
    Q = op(P); a = rs / np.maximum((P * Q).sum(0), 1e-30)
    X += P * a; R -= Q * a
    rn = (R * R).sum(0)
    if it % 25 == 0: print(it, float(np.sqrt(rn.sum() / (B*B).sum())), file=sys.stderr)
    if np.sqrt(rn.sum() / (B * B).sum()) < 1e-4: break
    P = R + P * (rn / rs); rs = rn
E = X.astype(np.float32)
def cos(Aa, Yy):
    Z = Aa @ E
    Z /= np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)
    return (Z * Yy).sum(1)
c_tr, c_ho = cos(Atr, Ytr), cos(A[hold], Y[hold])
print(f"lambda {lam}: cosine train {c_tr.mean():.3f}, held-out {c_ho.mean():.3f} (p10 {np.percentile(c_ho,10):.3f})", file=sys.stderr)
lens = np.array([len(e.ids) for e in enc])[hold]
for lo, hi in [(1,2),(2,4),(4,8),(8,16),(16,999)]:
    m = (lens >= lo) & (lens < hi)
    if m.any(): print(f"  tokens {lo}-{hi-1}: {c_ho[m].mean():.3f} ({m.sum()})", file=sys.stderr)
E.astype("<f2").tofile(sys.argv[3])
