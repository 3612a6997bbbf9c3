//! One bit a dimension: where a large project's scan looks first.
//!
//! Each stored vector also keeps its signs (48 bytes for 384 dimensions,
//! an eighth of its 8-bit row). A large project's scan first counts, for
//! every vector, the dimensions whose sign differs from the query's (the
//! Hamming distance, `popcnt`), then compares exactly only the nearest by
//! that count: the rows it reads are a fraction of the project's, and the
//! distances are read from 48 bytes instead of 384. Approximate: the recall
//! against the exact scan is measured in bench/README.md ("Signs first").

/// 64-bit words a code of `dims` dimensions takes.
pub fn words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// The signs of `row` into `out` (`words(row.len())` long): bit `i` is set
/// where `row[i]` is positive.
pub fn code(row: &[i8], out: &mut [u64]) {
    out.fill(0);
    for (i, x) in row.iter().enumerate() {
        if *x > 0 {
            out[i / 64] |= 1 << (i % 64);
        }
    }
}

fn distances_plain(q: &[u64], codes: &[u64], out: &mut [u16]) {
    for (code, d) in codes.chunks_exact(q.len()).zip(out.iter_mut()) {
        *d = q.iter().zip(code).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>() as u16;
    }
}

/// The same loop where the CPU counts bits in one instruction (a release
/// build targets plain x86-64, whose `count_ones` is a dozen).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn distances_popcnt(q: &[u64], codes: &[u64], out: &mut [u16]) {
    distances_plain(q, codes, out)
}

/// And where it counts eight words' bits at once (AVX-512 VPOPCNTDQ).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
fn distances_avx512(q: &[u64], codes: &[u64], out: &mut [u16]) {
    distances_plain(q, codes, out)
}

/// `out[i]` = the Hamming distance between `q` and the `i`-th code of
/// `codes` (`q.len()` words each; `out` is as long as there are codes).
pub fn distances(q: &[u64], codes: &[u64], out: &mut [u16]) {
    if q.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vpopcntdq")
        });
        static POPCNT: std::sync::LazyLock<bool> =
            std::sync::LazyLock::new(|| is_x86_feature_detected!("popcnt"));
        if *AVX512 {
            // SAFETY: the CPU was checked for AVX-512F and VPOPCNTDQ above.
            return unsafe { distances_avx512(q, codes, out) };
        }
        if *POPCNT {
            // SAFETY: the CPU was checked for POPCNT above.
            return unsafe { distances_popcnt(q, codes, out) };
        }
    }
    distances_plain(q, codes, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_holds_the_positive_dimensions() {
        let mut row = vec![0i8; 130];
        row[0] = 1;
        row[63] = 5;
        row[64] = -3;
        row[129] = 127;
        let mut out = vec![0u64; words(row.len())];
        code(&row, &mut out);
        assert_eq!(out, vec![1 | 1 << 63, 0, 1 << 1]);
    }

    #[test]
    fn distances_count_the_differing_signs_on_every_path() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let q: Vec<u64> = (0..6).map(|_| next()).collect();
        let codes: Vec<u64> = (0..6 * 37).map(|_| next()).collect();
        let expected: Vec<u16> = codes
            .chunks_exact(6)
            .map(|c| {
                (0..384)
                    .filter(|i| (q[i / 64] >> (i % 64)) & 1 != (c[i / 64] >> (i % 64)) & 1)
                    .count() as u16
            })
            .collect();
        let mut out = vec![0u16; 37];
        distances(&q, &codes, &mut out);
        assert_eq!(out, expected);
        let mut plain = vec![0u16; 37];
        distances_plain(&q, &codes, &mut plain);
        assert_eq!(plain, expected);
    }
}
