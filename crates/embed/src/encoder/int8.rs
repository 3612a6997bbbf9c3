//! The linear map in 8-bit integers, on AVX-512 VNNI or AVX2: each weight
//! row is quantised once at load (symmetric, its own scale), each token row
//! at every call (asymmetric, its own scale and zero point, so GELU's
//! lopsided output loses no range). `vpdpbusd` multiplies 64 byte pairs a
//! step, four times the f32 path's lanes; on AVX2 the bytes are widened to
//! 16 bits and `vpmaddwd` multiplies 16 pairs a step, reading a quarter of
//! f32's weight bytes. The integer sums are exact on every path (the same
//! vectors on both), and only the two roundings to 8 bits differ from f32 (a
//! sentence vector's cosine with the f32 one is 0.9985–0.9991 on the test's
//! texts, test `encoder`).

/// Weight rows and token rows are padded with zeros to a multiple of this.
const LANES: usize = 64;

/// A weight matrix in signed bytes: `n` rows of `k` (padded to `kp`), each
/// row `w[o] ≈ scale[o] · q[o]`.
pub struct Int8Matrix {
    k: usize,
    kp: usize,
    n: usize,
    q: Vec<i8>,
    scale: Vec<f32>,
    /// `Σ_i q[o][i]`: what the token rows' zero points cost each output.
    row_sum: Vec<i32>,
    /// `q` repacked for AMX tiles, where the CPU has them (`amx::pack`).
    tiles: Option<Vec<i8>>,
}

/// Whether this CPU has AVX-512 F, BW and VNNI (the widest int8 path).
fn vnni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU has AVX2 (the int8 path where VNNI is missing).
fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU runs the int8 path (AVX-512 VNNI, or AVX2).
pub fn available() -> bool {
    vnni() || avx2()
}

impl Int8Matrix {
    /// Quantises `w`: `n` rows of `k`, row-major; `n` is a multiple of 4.
    pub fn quantise(w: &[f32], k: usize) -> Self {
        let n = w.len() / k;
        assert!(n.is_multiple_of(4) && n * k == w.len(), "weight shape");
        let kp = k.next_multiple_of(LANES);
        let mut q = vec![0i8; n * kp];
        let mut scale = Vec::with_capacity(n);
        let mut row_sum = Vec::with_capacity(n);
        for (row, out) in w.chunks_exact(k).zip(q.chunks_exact_mut(kp)) {
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            let s = if max > 0.0 { max / 127.0 } else { 1.0 };
            for (o, v) in out.iter_mut().zip(row) {
                *o = (v / s).round().clamp(-127.0, 127.0) as i8;
            }
            scale.push(s);
            row_sum.push(out.iter().map(|&v| i32::from(v)).sum());
        }
        #[cfg(target_arch = "x86_64")]
        let tiles = (super::amx::available() && super::amx::fits(n)).then(|| super::amx::pack(&q, n, kp));
        #[cfg(not(target_arch = "x86_64"))]
        let tiles = None;
        Self {
            k,
            kp,
            n,
            q,
            scale,
            row_sum,
            tiles,
        }
    }
}

/// Token rows in unsigned bytes, `x[r] ≈ scale[r] · (u[r] − zero[r])`.
struct Tokens {
    u: Vec<u8>,
    scale: Vec<f32>,
    zero: Vec<i32>,
}

#[inline(always)]
fn quantise_tokens(x: &[f32], k: usize, kp: usize) -> Tokens {
    let rows = x.len() / k;
    let mut t = Tokens {
        u: vec![0; rows * kp],
        scale: Vec::with_capacity(rows),
        zero: Vec::with_capacity(rows),
    };
    for (row, out) in x.chunks_exact(k).zip(t.u.chunks_exact_mut(kp)) {
        // The range holds 0, so the zero point is a byte and 0.0 exact.
        let (lo, hi) = row
            .iter()
            .fold((0f32, 0f32), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let s = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
        let zero = (-lo / s).round().clamp(0.0, 255.0);
        // v/s + zero is at least -0.5 (zero is -lo/s rounded), so adding
        // 0.5 and truncating rounds it; `as` saturates at 255. No call in
        // the loop (`round` is one on baseline x86-64), so it vectorises.
        let inv = 1.0 / s;
        for (o, v) in out.iter_mut().zip(row) {
            // Clamped first (NaN too, by `max`; `clamp` would keep a NaN),
            // so the conversion is in range and compiles to plain vector
            // conversions.
            #[allow(clippy::manual_clamp)]
            let r = (v * inv + zero + 0.5).max(0.0).min(255.0);
            // SAFETY: `r` is finite and within 0..=255.
            *o = unsafe { r.to_int_unchecked::<i32>() } as u8;
        }
        t.scale.push(s);
        t.zero.push(zero as i32);
    }
    t
}

/// `y[r][o] = bias[o] + Σ_i x[r][i]·w[o][i]`, as `kernels::linear`, in 8 bits.
pub fn linear(x: &[f32], w: &Int8Matrix, bias: &[f32], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if vnni() {
        // Safety: the CPU has AVX-512 F, BW and VNNI.
        return unsafe { simd::linear_avx512(x, w, bias, y) };
    }
    linear_plain(x, w, bias, y)
}

/// `linear`'s body, inlined where the CPU's vectors are wider: the token
/// rows' quantisation and the sums' scaling are most of a call's time
/// besides the products (a release build targets plain x86-64 otherwise).
#[inline(always)]
fn linear_plain(x: &[f32], w: &Int8Matrix, bias: &[f32], y: &mut [f32]) {
    let (k, n) = (w.k, w.n);
    let rows = x.len() / k;
    assert_eq!(bias.len(), n, "bias shape");
    assert_eq!(y.len(), rows * n, "output shape");
    let t = quantise_tokens(x, k, w.kp);
    let mut sums = vec![0i32; rows * n];
    dot_products(&t.u, w, &mut sums);
    for r in 0..rows {
        let (zero, sx) = (t.zero[r], t.scale[r]);
        let out = &mut y[r * n..(r + 1) * n];
        for (o, v) in out.iter_mut().enumerate() {
            let exact = sums[r * n + o] - zero * w.row_sum[o];
            *v = bias[o] + sx * w.scale[o] * exact as f32;
        }
    }
}

/// `sums[r][o] = Σ_i u[r][i]·q[o][i]`, exactly.
fn dot_products(u: &[u8], w: &Int8Matrix, sums: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(tiles) = &w.tiles {
            // Safety: `tiles` exists only where `amx::available()`; it is
            // `amx::pack`'s output for this matrix; `u` and `sums` hold
            // `rows` rows of `kp` and of `n`.
            unsafe { super::amx::dot_products(u, u.len() / w.kp, w.kp, tiles, w.n, sums) };
            return;
        }
        if vnni() {
            // Safety: the CPU has AVX-512 F, BW and VNNI; every row is `kp`
            // long, a multiple of 64, and `n` a multiple of 4.
            unsafe { simd::dot_products(u, w, sums) };
            return;
        }
        if avx2() {
            // Safety: the CPU has AVX2; the shapes are as above.
            unsafe { simd::dot_products_avx2(u, w, sums) };
            return;
        }
    }
    portable_dot_products(u, w, sums);
}

fn portable_dot_products(u: &[u8], w: &Int8Matrix, sums: &mut [i32]) {
    for (ur, sr) in u.chunks_exact(w.kp).zip(sums.chunks_exact_mut(w.n)) {
        for (s, qr) in sr.iter_mut().zip(w.q.chunks_exact(w.kp)) {
            *s = ur
                .iter()
                .zip(qr)
                .map(|(&a, &b)| i32::from(a) * i32::from(b))
                .sum();
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::Int8Matrix;

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn linear_avx512(x: &[f32], w: &Int8Matrix, bias: &[f32], y: &mut [f32]) {
        super::linear_plain(x, w, bias, y)
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn dot_products(u: &[u8], w: &Int8Matrix, sums: &mut [i32]) {
        let (kp, n) = (w.kp, w.n);
        let rows = u.len() / kp;
        for o in (0..n).step_by(4) {
            let ws = [0, 1, 2, 3].map(|q| &w.q[(o + q) * kp..][..kp]);
            let mut r = 0;
            while r < rows {
                let take = (rows - r).min(4);
                let xs = [0, 1, 2, 3].map(|i| &u[(r + i.min(take - 1)) * kp..][..kp]);
                // Safety: every slice is `kp` long, a multiple of 64.
                let block = unsafe {
                    match take {
                        4 => block::<4>(xs, ws),
                        3 => widen(block::<3>([xs[0], xs[1], xs[2]], ws)),
                        2 => widen(block::<2>([xs[0], xs[1]], ws)),
                        _ => widen(block::<1>([xs[0]], ws)),
                    }
                };
                for (j, row) in block.iter().enumerate().take(take) {
                    sums[(r + j) * n + o..][..4].copy_from_slice(row);
                }
                r += take;
            }
        }
    }

    /// As `dot_products`, on AVX2: two token rows against four weight rows
    /// a step (eight running sums, in registers).
    #[target_feature(enable = "avx2")]
    pub unsafe fn dot_products_avx2(u: &[u8], w: &Int8Matrix, sums: &mut [i32]) {
        let (kp, n) = (w.kp, w.n);
        let rows = u.len() / kp;
        for o in (0..n).step_by(4) {
            let ws = [0, 1, 2, 3].map(|q| &w.q[(o + q) * kp..][..kp]);
            let mut r = 0;
            while r < rows {
                let take = (rows - r).min(2);
                // Safety: every slice is `kp` long, a multiple of 64.
                let block: [[i32; 4]; 2] = unsafe {
                    match take {
                        2 => block_avx2::<2>([&u[r * kp..][..kp], &u[(r + 1) * kp..][..kp]], ws),
                        _ => {
                            let [one] = block_avx2::<1>([&u[r * kp..][..kp]], ws);
                            [one, [0; 4]]
                        }
                    }
                };
                for (j, row) in block.iter().enumerate().take(take) {
                    sums[(r + j) * n + o..][..4].copy_from_slice(row);
                }
                r += take;
            }
        }
    }

    /// `sums[j][q]` = token row `j` · weight row `q`, 16 pairs a step: the
    /// bytes widened to 16 bits (tokens unsigned, weights signed), then
    /// `vpmaddwd`; a pair's sum (at most 2 × 255 × 127) fits 32 bits.
    #[target_feature(enable = "avx2")]
    unsafe fn block_avx2<const R: usize>(xs: [&[u8]; R], ws: [&[i8]; 4]) -> [[i32; 4]; R] {
        let k = ws[0].len();
        let mut acc = [[_mm256_setzero_si256(); 4]; R];
        let mut wv = [_mm256_setzero_si256(); 4];
        let mut i = 0;
        while i < k {
            // Safety: i + 16 <= k, the length of every slice.
            unsafe {
                for q in 0..4 {
                    wv[q] = _mm256_cvtepi8_epi16(_mm_loadu_si128(ws[q].as_ptr().add(i).cast()));
                }
                for j in 0..R {
                    let b = _mm256_cvtepu8_epi16(_mm_loadu_si128(xs[j].as_ptr().add(i).cast()));
                    for q in 0..4 {
                        acc[j][q] = _mm256_add_epi32(acc[j][q], _mm256_madd_epi16(b, wv[q]));
                    }
                }
            }
            i += 16;
        }
        let mut sums = [[0; 4]; R];
        for j in 0..R {
            // The four sums side by side: [Σ acc0, Σ acc1, Σ acc2, Σ acc3].
            let h01 = _mm256_hadd_epi32(acc[j][0], acc[j][1]);
            let h23 = _mm256_hadd_epi32(acc[j][2], acc[j][3]);
            let h = _mm256_hadd_epi32(h01, h23);
            let s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            // Safety: `sums[j]` is four i32s, 16 bytes.
            unsafe { _mm_storeu_si128(sums[j].as_mut_ptr().cast(), s) };
        }
        sums
    }

    fn widen<const R: usize>(sums: [[i32; 4]; R]) -> [[i32; 4]; 4] {
        let mut out = [[0; 4]; 4];
        out[..R].copy_from_slice(&sums);
        out
    }

    /// `sums[j][q]` = token row `j` · weight row `q`, 64 byte pairs a step.
    /// No closures in here: they would not inherit `target_feature`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn block<const R: usize>(xs: [&[u8]; R], ws: [&[i8]; 4]) -> [[i32; 4]; R] {
        let k = ws[0].len();
        let mut acc = [[_mm512_setzero_si512(); 4]; R];
        let mut wv = [_mm512_setzero_si512(); 4];
        let mut i = 0;
        while i < k {
            // Safety: i + 64 <= k, the length of every slice.
            unsafe {
                for q in 0..4 {
                    wv[q] = _mm512_loadu_si512(ws[q].as_ptr().add(i).cast());
                }
                for j in 0..R {
                    let b = _mm512_loadu_si512(xs[j].as_ptr().add(i).cast());
                    for q in 0..4 {
                        acc[j][q] = _mm512_dpbusd_epi32(acc[j][q], b, wv[q]);
                    }
                }
            }
            i += 64;
        }
        let mut sums = [[0; 4]; R];
        for j in 0..R {
            // Safety: `sums[j]` is four i32s, 16 bytes.
            unsafe { _mm_storeu_si128(sums[j].as_mut_ptr().cast(), sum4(acc[j])) };
        }
        sums
    }

    /// The sums of four vectors' sixteen lanes, side by side, in 13
    /// instructions where four `_mm512_reduce_add_epi32` take about 36: with
    /// 384-long rows the reductions were as many instructions as the
    /// products.
    #[target_feature(enable = "avx512f")]
    fn sum4(a: [__m512i; 4]) -> __m128i {
        // Per 128-bit lane: [a0₀+a0₂, a1₀+a1₂, a0₁+a0₃, a1₁+a1₃], and so for a2, a3.
        let a01 = _mm512_add_epi32(
            _mm512_unpacklo_epi32(a[0], a[1]),
            _mm512_unpackhi_epi32(a[0], a[1]),
        );
        let a23 = _mm512_add_epi32(
            _mm512_unpacklo_epi32(a[2], a[3]),
            _mm512_unpackhi_epi32(a[2], a[3]),
        );
        // Per 128-bit lane: each vector's share of it, in order.
        let b = _mm512_add_epi32(_mm512_unpacklo_epi64(a01, a23), _mm512_unpackhi_epi64(a01, a23));
        let c = _mm256_add_epi32(_mm512_castsi512_si256(b), _mm512_extracti64x4_epi64::<1>(b));
        _mm_add_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256::<1>(c))
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
    fn the_simd_sums_are_the_plain_loops_sums_exactly() {
        // Shapes of the model (384 → 1,152, 1,536 → 384), padding (k = 100),
        // token rows over a whole number of tiles (17, 33) and outputs that
        // are (64, 128, 192, 1,152) and are not (4, 8, 12) whole AMX groups.
        for (rows, k, n) in [
            (1, 64, 4),
            (3, 384, 8),
            (5, 100, 12),
            (9, 1536, 4),
            (4, 384, 1152),
            (1, 64, 64),
            (17, 384, 128),
            (33, 1536, 64),
            (5, 100, 192),
        ] {
            let w = Int8Matrix::quantise(&values(n * k, 2), k);
            let t = quantise_tokens(&values(rows * k, 1), k, w.kp);
            let mut want = vec![0; rows * n];
            portable_dot_products(&t.u, &w, &mut want);
            let mut got = vec![0; rows * n];
            dot_products(&t.u, &w, &mut got);
            assert_eq!(got, want, "({rows},{k},{n})");
            // Each x86 path on its own, also where a wider one runs.
            #[cfg(target_arch = "x86_64")]
            {
                if vnni() {
                    let mut got = vec![0; rows * n];
                    // Safety: the CPU has AVX-512 VNNI; `quantise` pads as required.
                    unsafe { simd::dot_products(&t.u, &w, &mut got) };
                    assert_eq!(got, want, "vnni ({rows},{k},{n})");
                }
                if avx2() {
                    let mut got = vec![0; rows * n];
                    // Safety: the CPU has AVX2; `quantise` pads as required.
                    unsafe { simd::dot_products_avx2(&t.u, &w, &mut got) };
                    assert_eq!(got, want, "avx2 ({rows},{k},{n})");
                }
                assert_eq!(
                    w.tiles.is_some(),
                    super::super::amx::available() && n % 64 == 0,
                    "AMX is used wherever it can be"
                );
            }
        }
    }

    #[test]
    fn the_int8_map_is_the_f32_map_within_its_rounding() {
        for (rows, k, n) in [(1, 64, 4), (3, 384, 8), (5, 100, 12), (9, 1536, 4)] {
            let (x, w, bias) = (values(rows * k, 1), values(n * k, 2), values(n, 3));
            let mut want = vec![0.0; rows * n];
            super::super::kernels::linear(&x, k, &w, &bias, &mut want);
            let mut got = vec![0.0; rows * n];
            linear(&x, &Int8Matrix::quantise(&w, k), &bias, &mut got);
            // Each product is off by at most half a step of each factor's
            // scale (1/255 of x's range, 1/127 of w's); the errors are not
            // all one way, so the sum's error grows like √k, not k.
            let bound = (k as f32).sqrt() * (2.0 / 255.0 + 1.0 / 127.0);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() < bound, "({rows},{k},{n}) [{i}]: {g} vs {w}");
            }
        }
    }

    #[test]
    fn a_row_of_zeros_gives_the_bias_exactly() {
        let k = 100;
        let w = Int8Matrix::quantise(&values(4 * k, 2), k);
        let bias = [0.5, -0.5, 0.0, 1.0];
        let mut got = vec![9.0; 4];
        linear(&vec![0.0; k], &w, &bias, &mut got);
        assert_eq!(got, bias);
    }
}
