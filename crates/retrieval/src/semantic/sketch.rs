//! One bit a dimension: where a large project's scan looks first.
//!
//! Each stored vector also keeps its signs (48 bytes for 384 dimensions,
//! an eighth of its 8-bit row). A large project's scan first counts, for
//! every vector, the dimensions whose sign differs from the query's (the
//! Hamming distance, `popcnt`), then compares exactly only the nearest by
//! that count: the rows it reads are a fraction of the project's, and the
//! distances are read from 48 bytes instead of 384. Approximate: the recall
//! against the exact scan is measured in bench/README.md ("Signs first").
//!
//! The codes are kept eight to a block, word by word: a block holds the
//! first word of its eight codes, then their second word, and so on. One
//! 512-bit step then takes the same word of eight codes, so with AVX-512
//! VPOPCNTDQ a code costs under one instruction a word instead of a dozen.

/// Codes a block holds (one 512-bit register of 64-bit words).
const LANES: usize = 8;

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

/// Every slot's code, blocked for the scan (see the module's doc).
#[derive(Default)]
pub struct Codes {
    words: usize,
    data: Vec<u64>,
}

impl Codes {
    /// Room for `slots` codes of `dims` dimensions, all zero.
    pub fn new(dims: usize, slots: usize) -> Codes {
        let mut codes = Codes {
            words: words(dims),
            data: vec![],
        };
        codes.resize(slots);
        codes
    }

    /// Room for `slots` codes; new ones are zero.
    pub fn resize(&mut self, slots: usize) {
        self.data.resize(slots.div_ceil(LANES) * LANES * self.words, 0);
    }

    /// Sets `slot`'s code to the signs of `row`.
    pub fn set(&mut self, slot: usize, row: &[i8]) {
        let mut one = vec![0u64; self.words];
        code(row, &mut one);
        let (block, lane) = (slot / LANES, slot % LANES);
        for (j, word) in one.into_iter().enumerate() {
            self.data[(block * self.words + j) * LANES + lane] = word;
        }
    }

    pub fn bytes(&self) -> usize {
        self.data.capacity() * 8
    }

    /// `out[i]` = the Hamming distance between `q` (a code, `words` long)
    /// and slot `i`'s code, for every slot `out` has room for.
    pub fn distances(&self, q: &[u64], out: &mut [u16]) {
        assert_eq!(q.len(), self.words, "the query's code has another length");
        assert!(
            out.len() <= self.data.len() / self.words.max(1),
            "more distances than codes"
        );
        if self.words == 0 {
            return out.fill(0);
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
                return unsafe { self.distances_avx512(q, out) };
            }
            if *POPCNT {
                // SAFETY: the CPU was checked for POPCNT above.
                return unsafe { self.distances_popcnt(q, out) };
            }
        }
        self.distances_plain(q, out)
    }

    fn distances_plain(&self, q: &[u64], out: &mut [u16]) {
        for (block, out) in self
            .data
            .chunks_exact(self.words * LANES)
            .zip(out.chunks_mut(LANES))
        {
            for (lane, d) in out.iter_mut().enumerate() {
                *d = q
                    .iter()
                    .enumerate()
                    .map(|(j, w)| (w ^ block[j * LANES + lane]).count_ones())
                    .sum::<u32>() as u16;
            }
        }
    }

    /// The same loop where the CPU counts bits in one instruction (a
    /// release build targets plain x86-64, whose `count_ones` is a dozen).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn distances_popcnt(&self, q: &[u64], out: &mut [u16]) {
        self.distances_plain(q, out)
    }

    /// One block a step: the same word of its eight codes XORed with the
    /// query's, counted (`vpopcntq`) and summed in one register, then
    /// narrowed to eight 16-bit distances.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    fn distances_avx512(&self, q: &[u64], out: &mut [u16]) {
        use std::arch::x86_64::*;
        for (block, out) in self
            .data
            .chunks_exact(self.words * LANES)
            .zip(out.chunks_mut(LANES))
        {
            let mut sum = _mm512_setzero_si512();
            for (j, w) in q.iter().enumerate() {
                // SAFETY: the block holds `words` runs of LANES words.
                let codes = unsafe { _mm512_loadu_si512(block[j * LANES..].as_ptr().cast()) };
                let differ = _mm512_xor_si512(codes, _mm512_set1_epi64(*w as i64));
                sum = _mm512_add_epi64(sum, _mm512_popcnt_epi64(differ));
            }
            // A distance is at most 64 × words, far below 2¹⁶.
            let narrow = _mm512_cvtepi64_epi16(sum);
            if out.len() == LANES {
                // SAFETY: `out` holds eight u16s, 16 bytes.
                unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), narrow) };
            } else {
                let mut all = [0u16; LANES];
                // SAFETY: `all` holds eight u16s, 16 bytes.
                unsafe { _mm_storeu_si128(all.as_mut_ptr().cast(), narrow) };
                out.copy_from_slice(&all[..out.len()]);
            }
        }
    }
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
        let mut byte = || (next() >> 32) as i8;
        let dims = 384;
        let query: Vec<i8> = (0..dims).map(|_| byte()).collect();
        // 37 codes: four whole blocks and a part.
        let rows: Vec<Vec<i8>> = (0..37).map(|_| (0..dims).map(|_| byte()).collect()).collect();
        let mut codes = Codes::new(dims, rows.len());
        // Set out of order, and one twice: a slot's code is its last row's.
        codes.set(3, &rows[0]);
        for (slot, row) in rows.iter().enumerate().rev() {
            codes.set(slot, row);
        }
        let expected: Vec<u16> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(&query)
                    .filter(|(a, b)| (**a > 0) != (**b > 0))
                    .count() as u16
            })
            .collect();
        let mut q = vec![0u64; words(dims)];
        code(&query, &mut q);
        let mut out = vec![0u16; rows.len()];
        codes.distances(&q, &mut out);
        assert_eq!(out, expected);
        let mut plain = vec![0u16; rows.len()];
        codes.distances_plain(&q, &mut plain);
        assert_eq!(plain, expected);
        // Fewer distances than codes: the first ones, whatever the block.
        let mut some = vec![0u16; 11];
        codes.distances(&q, &mut some);
        assert_eq!(some, expected[..11]);
    }
}
