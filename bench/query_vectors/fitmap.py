# Usage: fitmap.py PREFIX lambda out.f32 (PREFIX-c.f32, PREFIX-qc.f32: a truncated encoder's vectors of corpus.txt and qcorpus.txt)
# Fits a linear map from a truncated encoder's sentence vectors to the full model's.
import sys, numpy as np
D = 384
pre = sys.argv[1]
def load(p): return np.fromfile(p, dtype="<f4").reshape(-1, D)
X = np.concatenate([load(f"{pre}-c.f32"), load(f"{pre}-qc.f32")])
Y = np.concatenate([load("corpus.f32"), load("qcorpus.f32")])
n = len(X); hold = np.arange(n) % 20 == 0
Xa = np.hstack([X, np.ones((n, 1), np.float32)])
lam = float(sys.argv[2])
A = Xa[~hold].T.astype(np.float64) @ Xa[~hold]; A[np.arange(D), np.arange(D)] += lam
W = np.linalg.solve(A, Xa[~hold].T.astype(np.float64) @ Y[~hold]).astype(np.float32)
def cos(Xs, Ys, map=True):
    Z = np.hstack([Xs, np.ones((len(Xs), 1), np.float32)]) @ W if map else Xs.copy()
    Z /= np.linalg.norm(Z, axis=1, keepdims=True); return (Z * Ys).sum(1)
print(f"lambda {lam}: held-out {cos(X[hold], Y[hold]).mean():.3f}, unmapped {cos(X[hold], Y[hold], False).mean():.3f}")
for k in ["tune", "eval"]:
    c = cos(load(f"{pre}-q-{k}.f32"), load(f"q-{k}.f32"))
    print(f"  q-{k}: {c.mean():.3f} p10 {np.percentile(c, 10):.3f}")
W.astype("<f4").tofile(sys.argv[3])
