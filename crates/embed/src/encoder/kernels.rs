//! The encoder's arithmetic: a linear map over a block of token rows, layer
//! normalisation, GELU and softmax. The linear map is nearly all the time
//! spent; it has an AVX-512 path and an AVX2 + FMA path, chosen at run
//! time, and a portable one.

/// Token rows multiplied against one pass over a weight matrix: enough to
/// reuse each weight row 16 times, few enough that the rows stay in L1/L2.
const ROW_BLOCK: usize = 16;

/// `y[r][o] = bias[o] + Σ_i x[r][i]·w[o][i]`: `x` is row-major, `k` wide;
/// `w` holds `bias.len()` rows of `k` (how PyTorch stores a Linear's weight).
pub fn linear(x: &[f32], k: usize, w: &[f32], bias: &[f32], y: &mut [f32]) {
    let n = bias.len();
    let rows = x.len() / k;
    assert_eq!(w.len(), n * k, "weight shape");
    assert_eq!(y.len(), rows * n, "output shape");
    for start in (0..rows).step_by(ROW_BLOCK) {
        let end = (start + ROW_BLOCK).min(rows);
        let (xb, yb) = (&x[start * k..end * k], &mut y[start * n..end * n]);
        #[cfg(target_arch = "x86_64")]
        if k.is_multiple_of(16) && n.is_multiple_of(4) && simd::has_avx512() {
            // Safety: the CPU has AVX-512F (checked above); the shapes were asserted.
            unsafe { simd::linear_avx512(xb, k, w, n, yb) };
            continue;
        }
        #[cfg(target_arch = "x86_64")]
        if k.is_multiple_of(8) && simd::available() {
            // Safety: the CPU has AVX2 and FMA (checked above); the shapes were asserted.
            unsafe { simd::linear(xb, k, w, n, yb) };
            continue;
        }
        portable_linear(xb, k, w, n, yb);
    }
    for row in y.chunks_exact_mut(n) {
        row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
    }
}

fn portable_linear(x: &[f32], k: usize, w: &[f32], n: usize, y: &mut [f32]) {
    for (xr, yr) in x.chunks_exact(k).zip(y.chunks_exact_mut(n)) {
        for (out, wr) in yr.iter_mut().zip(w.chunks_exact(k)) {
            *out = portable_dot(xr, wr);
        }
    }
}

/// The dot product of two equally long slices.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if a.len().is_multiple_of(8) && simd::available() {
        // Safety: AVX2 and FMA are present; both slices are `a.len()` long.
        return unsafe { simd::dot(a, b) };
    }
    portable_dot(a, b)
}

/// Eight running sums, so the compiler can vectorise without reassociating.
fn portable_dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Normalises each `gamma.len()`-wide row of `x` to mean 0 and variance 1,
/// then scales by `gamma` and shifts by `beta`.
pub fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let width = gamma.len();
    for row in x.chunks_exact_mut(width) {
        let mean = row.iter().sum::<f32>() / width as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
        let scale = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = (*v - mean) * scale * g + b;
        }
    }
}

/// GELU with the error function (BERT's `gelu`), in place. The loop has no
/// call in it, so the compiler vectorises it (a call to `erff` a value was
/// a fifth of a short query's time).
pub fn gelu(x: &mut [f32]) {
    for v in x {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// The error function as a rational function of x on [-4, 4] (Eigen's
/// `generic_fast_erf_float`, which XLA and TVM use too; beyond ±4, erf is
/// ±1 to f32's precision). Within 1e-6 of `erff` everywhere (test below).
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_4e-10_f32;
    for c in [
        2.770_681_5e-8,
        -2.101_024e-6,
        -5.692_506_2e-5,
        -7.349_906_4e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ] {
        p = p * x2 + c;
    }
    let mut q = -1.456_607_15e-5_f32;
    for c in [-2.133_740_5e-4, -1.682_827e-3, -7.373_329_3e-3, -1.426_473_9e-2] {
        q = q * x2 + c;
    }
    x * p / q
}

/// Softmax in place.
pub fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    x.iter_mut().for_each(|v| *v /= sum);
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }

    #[target_feature(enable = "avx2,fma")]
    fn hsum(v: __m256) -> f32 {
        let pair = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        let pair = _mm_add_ps(pair, _mm_movehl_ps(pair, pair));
        _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)))
    }

    /// `a.len()` is a multiple of 8 and `b` is as long.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
        debug_assert!(a.len().is_multiple_of(8) && b.len() == a.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let (mut s0, mut s1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut i = 0;
        // Safety (all loads): i + 8 <= a.len() == b.len().
        unsafe {
            while i + 16 <= a.len() {
                s0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), s0);
                s1 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 8)), _mm256_loadu_ps(pb.add(i + 8)), s1);
                i += 16;
            }
            if i < a.len() {
                s0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), s0);
            }
        }
        hsum(_mm256_add_ps(s0, s1))
    }

    /// Two weight rows against four token rows at a time: each load feeds
    /// more than one multiply-add. `k` is a multiple of 8.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn linear(x: &[f32], k: usize, w: &[f32], n: usize, y: &mut [f32]) {
        let rows = x.len() / k;
        let (px, pw) = (x.as_ptr(), w.as_ptr());
        let mut o = 0;
        while o + 2 <= n {
            let mut r = 0;
            // Safety (all loads): rows r..r+4 < rows and weight rows o, o+1 < n,
            // each `k` long; i + 8 <= k.
            unsafe {
                let (w0, w1) = (pw.add(o * k), pw.add((o + 1) * k));
                while r + 4 <= rows {
                    let xs = [
                        px.add(r * k),
                        px.add((r + 1) * k),
                        px.add((r + 2) * k),
                        px.add((r + 3) * k),
                    ];
                    let mut acc = [_mm256_setzero_ps(); 8];
                    let mut i = 0;
                    while i < k {
                        let (a0, a1) = (_mm256_loadu_ps(w0.add(i)), _mm256_loadu_ps(w1.add(i)));
                        for (j, xr) in xs.iter().enumerate() {
                            let b = _mm256_loadu_ps(xr.add(i));
                            acc[j] = _mm256_fmadd_ps(a0, b, acc[j]);
                            acc[4 + j] = _mm256_fmadd_ps(a1, b, acc[4 + j]);
                        }
                        i += 8;
                    }
                    for j in 0..4 {
                        y[(r + j) * n + o] = hsum(acc[j]);
                        y[(r + j) * n + o + 1] = hsum(acc[4 + j]);
                    }
                    r += 4;
                }
            }
            for r in r..rows {
                let xr = &x[r * k..(r + 1) * k];
                // Safety: as above, one row at a time.
                unsafe {
                    y[r * n + o] = dot(xr, &w[o * k..(o + 1) * k]);
                    y[r * n + o + 1] = dot(xr, &w[(o + 1) * k..(o + 2) * k]);
                }
            }
            o += 2;
        }
        if o < n {
            for r in 0..rows {
                // Safety: as above, the last weight row alone.
                y[r * n + o] = unsafe { dot(&x[r * k..(r + 1) * k], &w[o * k..]) };
            }
        }
    }

    pub fn has_avx512() -> bool {
        std::is_x86_feature_detected!("avx512f")
    }

    /// Four weight rows against up to four token rows at a time, 16 lanes
    /// wide: sixteen running sums, each load feeding four multiply-adds.
    /// `k` is a multiple of 16 and `n` of 4.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn linear_avx512(x: &[f32], k: usize, w: &[f32], n: usize, y: &mut [f32]) {
        let rows = x.len() / k;
        for o in (0..n).step_by(4) {
            let ws = [0, 1, 2, 3].map(|q| &w[(o + q) * k..(o + q + 1) * k]);
            let mut r = 0;
            while r < rows {
                let take = (rows - r).min(4);
                let xs = [0, 1, 2, 3].map(|i| &x[(r + i.min(take - 1)) * k..][..k]);
                // Safety: every slice is `k` long, `k` a multiple of 16.
                let sums = unsafe {
                    match take {
                        4 => block512::<4>(xs, ws),
                        3 => widen(block512::<3>([xs[0], xs[1], xs[2]], ws)),
                        2 => widen(block512::<2>([xs[0], xs[1]], ws)),
                        _ => widen(block512::<1>([xs[0]], ws)),
                    }
                };
                for (j, row) in sums.iter().enumerate().take(take) {
                    y[(r + j) * n + o..][..4].copy_from_slice(row);
                }
                r += take;
            }
        }
    }

    /// `R` token rows' sums as four, the rest zero.
    fn widen<const R: usize>(sums: [[f32; 4]; R]) -> [[f32; 4]; 4] {
        let mut out = [[0.0; 4]; 4];
        out[..R].copy_from_slice(&sums);
        out
    }

    /// `sums[j][q]` = token row `j` · weight row `q`; every slice is as
    /// long, a multiple of 16. No closures in here: a closure does not
    /// inherit `target_feature`, and its intrinsics would not be inlined.
    #[target_feature(enable = "avx512f")]
    unsafe fn block512<const R: usize>(xs: [&[f32]; R], ws: [&[f32]; 4]) -> [[f32; 4]; R] {
        let k = ws[0].len();
        let mut acc = [[_mm512_setzero_ps(); 4]; R];
        let mut wv = [_mm512_setzero_ps(); 4];
        let mut i = 0;
        while i < k {
            // Safety: i + 16 <= k, the length of every slice.
            unsafe {
                for q in 0..4 {
                    wv[q] = _mm512_loadu_ps(ws[q].as_ptr().add(i));
                }
                for j in 0..R {
                    let b = _mm512_loadu_ps(xs[j].as_ptr().add(i));
                    for q in 0..4 {
                        acc[j][q] = _mm512_fmadd_ps(wv[q], b, acc[j][q]);
                    }
                }
            }
            i += 16;
        }
        let mut sums = [[0.0; 4]; R];
        for j in 0..R {
            for q in 0..4 {
                sums[j][q] = _mm512_reduce_add_ps(acc[j][q]);
            }
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| {
                (((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 16) % 2000) as f32 / 1000.0
                    - 1.0
            })
            .collect()
    }

    #[test]
    fn the_fast_linear_maps_give_what_the_portable_one_gives_for_any_shape() {
        let shapes = [
            (1, 8, 1),
            (3, 16, 5),
            (4, 384, 2),
            (17, 384, 7),
            (33, 1536, 3),
            (5, 24, 9),
            (1, 16, 4),
            (2, 32, 8),
            (3, 384, 12),
            (18, 1536, 4),
            (7, 384, 1152),
        ];
        for (rows, k, n) in shapes {
            let (x, w, bias) = (values(rows * k, 1), values(n * k, 2), values(n, 3));
            let with_bias = |mut y: Vec<f32>| {
                y.chunks_exact_mut(n)
                    .for_each(|row| row.iter_mut().zip(&bias).for_each(|(v, b)| *v += b));
                y
            };
            let mut want = vec![0.0; rows * n];
            portable_linear(&x, k, &w, n, &mut want);
            let want = with_bias(want);
            let mut dispatched = vec![0.0; rows * n];
            linear(&x, k, &w, &bias, &mut dispatched);
            let mut paths = vec![("dispatched", dispatched)];
            // The AVX2 path too where AVX-512 takes the shape first.
            #[cfg(target_arch = "x86_64")]
            if simd::available() && k % 8 == 0 {
                let mut y = vec![0.0; rows * n];
                // Safety: the CPU has AVX2 and FMA; the shapes fit.
                unsafe { simd::linear(&x, k, &w, n, &mut y) };
                paths.push(("avx2", with_bias(y)));
            }
            for (path, got) in &paths {
                for (i, (g, want)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - want).abs() < 1e-4 * (1.0 + want.abs()),
                        "{path} ({rows},{k},{n}) [{i}]: {g} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_rational_erf_is_within_a_millionth_of_libms() {
        let mut worst = 0f32;
        for i in -80_000..=80_000 {
            let x = i as f32 * 1e-4;
            worst = worst.max((erf(x) - libm::erff(x)).abs());
        }
        assert!(worst < 1e-6, "largest difference {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(f32::INFINITY), erf(4.0));
        assert!(erf(f32::NAN).is_nan());
    }

    #[test]
    fn dot_layer_norm_gelu_and_softmax_match_their_definitions() {
        let (a, b) = (values(40, 4), values(40, 5));
        let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - want).abs() < 1e-5);

        let mut row = vec![1.0, 2.0, 3.0, 4.0];
        layer_norm(&mut row, &[1.0; 4], &[0.5; 4], 1e-12);
        let sd = 1.25f32.sqrt();
        let expected = [-1.5 / sd + 0.5, -0.5 / sd + 0.5, 0.5 / sd + 0.5, 1.5 / sd + 0.5];
        row.iter()
            .zip(expected)
            .for_each(|(g, w)| assert!((g - w).abs() < 1e-6, "{g} vs {w}"));

        let mut g = vec![0.0, 1.0, -1.0, 3.0];
        gelu(&mut g);
        let expected = [0.0, 0.841_344_7, -0.158_655_26, 2.995_950_2];
        g.iter()
            .zip(expected)
            .for_each(|(g, w)| assert!((g - w).abs() < 1e-6, "{g} vs {w}"));

        let mut s = vec![1.0, 2.0, 3.0];
        softmax(&mut s);
        let e = [1f32.exp(), 2f32.exp(), 3f32.exp()];
        let total: f32 = e.iter().sum();
        s.iter()
            .zip(e)
            .for_each(|(g, w)| assert!((g - w / total).abs() < 1e-6));
    }
}
