//! The semantic arm: every vector of one project, compared exactly where
//! the project is small, by its signs first where it is large.
//!
//! Vectors (L2-normalised, 384 dimensions) are kept as 8-bit integers with
//! one scale each (`v ≈ scale × q`), 388 bytes a memory instead of 1,536;
//! the query is quantised the same way and compared with an integer dot
//! product: one `vpdpbusd` loop over every row where the CPU has AVX-512
//! VNNI, one `vpmaddubsw` loop where it has AVX2, else a loop the compiler
//! vectorises. Up to `SKETCH_MIN` (40,000) vectors, every vector that
//! passes the query's filters is compared: nothing is missed and filters
//! never starve the result. At 100,000 memories such a scan reads 38 MB and
//! is bound by memory bandwidth: about 1.1–1.8 ms with AVX-512 VNNI, 3.4–4.2
//! ms on an AVX2-only machine (bench/README.md, "No commit per read, admission
//! from a gate", "An AVX2 machine").
//!
//! A larger project is scanned by its signs first (`sketch`): the Hamming
//! distance of every vector's 48-byte sign code to the query's, then an
//! exact comparison of the nearest sixteenth (at least ten times the hits
//! asked for, widened until that many passed the filters). Every vector is
//! still looked at, and a similarity returned is the exact one; what can
//! be missed is a vector whose signs differ from the query's more than the
//! nearest sixteenth's do. On 100,000 real sentence vectors this kept
//! 100 % of the exact top 20 and 99.1 % of the top 400, in 0.8–1.3 ms
//! against 1.7–2.4 (bench/README.md, "Signs first").
//!
//! A query is compared relative to the project's common direction (the mean
//! of its vectors, `μ`): a memory's similarity is `cos(q, d) − λ·μ·(d − μ)`.
//! Among thousands of routine notes, what they all share says little about
//! which one a question wants; discounting it lets the memory that matches
//! the question's distinctive part outrank them. `λ` grows with the
//! project, `COMMON_WEIGHT × n / (n + COMMON_HALF)`, so a small project's
//! mean, made of the very memories asked about, changes nothing. Tuned on
//! the recall benchmark's tune set at 10,000 newer memories (bench/README.md,
//! "The common direction").
//!
//! The discount is taken relative to the project's average memory (`μ·μ`),
//! so a memory as aligned with the common direction as the average keeps its
//! plain cosine, and the project's mean similarity to any query is its mean
//! plain cosine. The scale that `MIN_SIMILARITY` and fusion read is thus the
//! same in a project of 100 memories and of 100,000 (bench/README.md, "The
//! semantic scale at every size").

/// Cosine below which a memory is not a semantic hit: unrelated texts score
/// about 0 to 0.15 with all-MiniLM-L6-v2.
pub const MIN_SIMILARITY: f32 = 0.2;

/// The most of the common direction discounted (a very large project's λ).
pub const COMMON_WEIGHT: f32 = 0.5;
/// Vectors at which half of `COMMON_WEIGHT` is discounted.
pub const COMMON_HALF: f32 = 3_000.0;

mod sketch;

use std::{cmp::Reverse, collections::BinaryHeap};

/// Vectors from which a scan looks at the signs first (`sketch`); a smaller
/// project is compared exactly, every vector. Below about this many, the
/// exact scan costs no more (bench/README.md, "Signs first").
pub const SKETCH_MIN: usize = 40_000;
/// The share of a large project's vectors compared exactly, nearest by
/// their signs first: one in `SKETCH_SHARE`, and never fewer than
/// `SKETCH_OVERSAMPLE` times the hits asked for.
pub const SKETCH_SHARE: usize = 16;
/// See `SKETCH_SHARE`.
pub const SKETCH_OVERSAMPLE: usize = 10;

/// An f32 that orders totally (similarities are finite).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Ordered(pub(crate) f32);

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[derive(Default)]
pub struct Semantic {
    dims: usize,
    /// `dims` values per slot (zeros where a slot has no vector).
    data: Vec<i8>,
    /// Per slot: the scale, 0 where there is no vector.
    scales: Vec<f32>,
    vectors: usize,
    /// The sum of every vector (as quantised), for the common direction.
    sum: Vec<f64>,
    /// Every slot's signs (`sketch`).
    codes: sketch::Codes,
}

/// A query quantised for the scan; a row's similarity is its dot product
/// with `q` times the two scales, plus `offset`.
pub struct Probe {
    q: Vec<i8>,
    scale: f32,
    offset: f32,
}

impl Probe {
    /// Plain cosine similarity to `query`.
    pub fn plain(query: &[f32]) -> Probe {
        let (q, scale) = quantise(query);
        Probe {
            q,
            scale,
            offset: 0.0,
        }
    }
}

/// `v` as 8-bit integers and their scale.
pub fn quantise(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    (
        v.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
            .collect(),
        scale,
    )
}

fn dot_plain(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| *x as i32 * *y as i32).sum()
}

/// The same loop compiled for AVX2 (a release build targets plain x86-64):
/// four times faster on a CPU that has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_plain(a, b)
}

/// The same loop again, 64 bytes a step where the CPU has AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
fn dot_avx512(a: &[i8], b: &[i8]) -> i32 {
    dot_plain(a, b)
}

fn dot(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::LazyLock<bool> =
            std::sync::LazyLock::new(|| is_x86_feature_detected!("avx512bw"));
        if *AVX512 {
            // SAFETY: the CPU was checked for AVX-512BW above.
            return unsafe { dot_avx512(a, b) };
        }
        static AVX2: std::sync::LazyLock<bool> =
            std::sync::LazyLock::new(|| is_x86_feature_detected!("avx2"));
        if *AVX2 {
            // SAFETY: the CPU was checked for AVX2 above.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_plain(a, b)
}

/// Whether the one-pass VNNI scan runs here.
#[cfg(target_arch = "x86_64")]
fn has_vnni() -> bool {
    static VNNI: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
    });
    *VNNI
}

/// Whether the AVX2 scan runs here (when the VNNI one does not).
#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    static AVX2: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| is_x86_feature_detected!("avx2"));
    *AVX2
}

/// `out[i]` = `q` · the `i`-th `q.len()`-long row of `rows`, for every row
/// (`rows` holds `out.len()` of them). Stored values are in -127..=127
/// (`quantise`), which the VNNI scan relies on.
fn dots(q: &[i8], rows: &[i8], out: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_vnni() && vnni::fits(q.len()) {
            // SAFETY: the CPU was checked for AVX-512F/BW/VNNI, and the length fits.
            unsafe { vnni::dots(q, rows, out) };
            return;
        }
        if has_avx2() && avx2::fits(q.len()) {
            // SAFETY: the CPU was checked for AVX2, and the length fits.
            unsafe { avx2::dots(q, rows, out) };
            return;
        }
    }
    for (row, o) in rows.chunks_exact(q.len().max(1)).zip(out.iter_mut()) {
        *o = dot(q, row);
    }
}

/// Rows asked for ahead of the one compared, where rows are read out of order.
const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to bring `bytes` into its cache (a hint; nothing elsewhere).
fn prefetch(bytes: &[i8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch reads nothing and faults on no address; SSE is
        // part of x86-64.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// `q` · `row`, a stored row: `dots` for one row, so the scan's
/// `vpdpbusd` loop where the CPU has it.
fn dot_row(q: &[i8], row: &[i8]) -> i32 {
    let mut sum = 0;
    dots(q, row, std::slice::from_mut(&mut sum));
    sum
}

/// The semantic arm's scan as one loop over every row, 64 byte pairs a
/// step (`vpdpbusd`), without a call or a dispatch per vector.
#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;

    /// The most 64-byte chunks a vector may have here (1,024 dimensions).
    const MAX_CHUNKS: usize = 16;

    /// Vectors of whole 64-byte chunks, up to `MAX_CHUNKS` (all-MiniLM-L6-v2's
    /// 384 dimensions are 6); others take the per-vector loop.
    pub fn fits(dims: usize) -> bool {
        dims > 0 && dims.is_multiple_of(64) && dims / 64 <= MAX_CHUNKS
    }

    /// `vpdpbusd` multiplies unsigned by signed bytes: the query's
    /// magnitudes are the unsigned side, and each row's bytes take the
    /// query's signs (negated where it is negative; a stored -128 would
    /// not negate, and `quantise` never stores one).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn dots(q: &[i8], rows: &[i8], out: &mut [i32]) {
        let chunks = q.len() / 64;
        let zero = _mm512_setzero_si512();
        let mut magnitudes = [zero; MAX_CHUNKS];
        let mut negative = [0 as __mmask64; MAX_CHUNKS];
        for c in 0..chunks {
            // SAFETY: chunk c lies inside `q` (`fits`).
            let v = unsafe { _mm512_loadu_si512(q.as_ptr().add(c * 64).cast()) };
            magnitudes[c] = _mm512_abs_epi8(v);
            negative[c] = _mm512_movepi8_mask(v);
        }
        for (row, o) in rows.chunks_exact(q.len()).zip(out.iter_mut()) {
            let mut acc = zero;
            for c in 0..chunks {
                // SAFETY: chunk c lies inside `row`, as long as `q`.
                let v = unsafe { _mm512_loadu_si512(row.as_ptr().add(c * 64).cast()) };
                let v = _mm512_mask_sub_epi8(v, negative[c], zero, v);
                acc = _mm512_dpbusd_epi32(acc, magnitudes[c], v);
            }
            *o = _mm512_reduce_add_epi32(acc);
        }
    }
}

/// The same one-loop scan on AVX2 (no VNNI), 32 byte pairs a step:
/// `vpmaddubsw` multiplies the query's magnitudes by the row's bytes with
/// the query's signs and adds neighbouring pairs into 16 bits, which cannot
/// saturate (2 × 127 × 127 < 2¹⁵), then `vpmaddwd` widens to 32 bits.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// The most 32-byte chunks a vector may have here (1,024 dimensions).
    const MAX_CHUNKS: usize = 32;

    /// Vectors of whole 32-byte chunks, up to `MAX_CHUNKS` (384 dimensions
    /// are 12); others take the per-vector loop.
    pub fn fits(dims: usize) -> bool {
        dims > 0 && dims.is_multiple_of(32) && dims / 32 <= MAX_CHUNKS
    }

    /// Stored values are in -127..=127 (`quantise`): a magnitude is at most
    /// 127, and `vpsignb` of a row byte never meets -128.
    #[target_feature(enable = "avx2")]
    pub unsafe fn dots(q: &[i8], rows: &[i8], out: &mut [i32]) {
        let chunks = q.len() / 32;
        let zero = _mm256_setzero_si256();
        let ones = _mm256_set1_epi16(1);
        let mut magnitudes = [zero; MAX_CHUNKS];
        let mut signs = [zero; MAX_CHUNKS];
        for c in 0..chunks {
            // SAFETY: chunk c lies inside `q` (`fits`).
            let v = unsafe { _mm256_loadu_si256(q.as_ptr().add(c * 32).cast()) };
            magnitudes[c] = _mm256_abs_epi8(v);
            signs[c] = v;
        }
        for (row, o) in rows.chunks_exact(q.len()).zip(out.iter_mut()) {
            let mut acc = zero;
            for c in 0..chunks {
                // SAFETY: chunk c lies inside `row`, as long as `q`.
                let v = unsafe { _mm256_loadu_si256(row.as_ptr().add(c * 32).cast()) };
                // The row's bytes negated where the query's are negative
                // (and zeroed where they are zero, whose magnitude is 0).
                let v = _mm256_sign_epi8(v, signs[c]);
                let pairs = _mm256_maddubs_epi16(magnitudes[c], v);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
            }
            let sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
            let sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0b01_00_11_10));
            let sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0b10_11_00_01));
            *o = _mm_cvtsi128_si32(sum);
        }
    }
}

/// Rows scanned a step: their dot products fit a buffer on the stack.
const SCAN_ROWS: usize = 512;

/// How many vectors `top_of` compares exactly, nearest by signs first, in a
/// project of `vectors` asked for `n`: `None` where it compares them all.
fn candidates(vectors: usize, n: usize) -> Option<usize> {
    let c = (vectors / SKETCH_SHARE).max(n.saturating_mul(SKETCH_OVERSAMPLE));
    (vectors >= SKETCH_MIN && c < vectors).then_some(c)
}

thread_local! {
    /// A large scan's Hamming distances, one a slot: kept per thread, so a
    /// search does not allocate and zero 200 KB at 100,000 vectors.
    static DISTANCES: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Bit `i` set where `run[i]` (at most 64 distances) lies in `from..to`.
fn in_band(run: &[u16], from: u16, to: u16) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::LazyLock<bool> =
            std::sync::LazyLock::new(|| is_x86_feature_detected!("avx512bw"));
        if *AVX512 {
            // SAFETY: the CPU was checked for AVX-512BW above.
            return unsafe { in_band_avx512(run, from, to) };
        }
    }
    in_band_plain(run, from, to)
}

fn in_band_plain(run: &[u16], from: u16, to: u16) -> u64 {
    let width = to.wrapping_sub(from);
    run.iter()
        .enumerate()
        .fold(0, |m, (i, d)| m | u64::from(d.wrapping_sub(from) < width) << i)
}

/// The same, which the compiler turns into 32-lane compares.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn in_band_avx512(run: &[u16], from: u16, to: u16) -> u64 {
    in_band_plain(run, from, to)
}

/// The best `n` similarities seen, and the least a newcomer needs.
struct Best {
    n: usize,
    /// A min-heap of the best n, by similarity.
    heap: BinaryHeap<Reverse<(Ordered, u32)>>,
    floor: f32,
}

impl Best {
    fn new(n: usize) -> Best {
        Best {
            n,
            heap: BinaryHeap::with_capacity(n.min(4096) + 1),
            floor: MIN_SIMILARITY,
        }
    }

    /// Keeps `slot` if it is among the best `n` so far (`similarity` is at
    /// least `floor`).
    fn push(&mut self, slot: u32, similarity: f32) {
        self.heap.push(Reverse((Ordered(similarity), slot)));
        if self.heap.len() > self.n {
            self.heap.pop();
            self.floor = self
                .heap
                .peek()
                .map_or(self.floor, |Reverse((s, _))| s.0.max(MIN_SIMILARITY));
        }
    }

    fn into_vec(self) -> Vec<(u32, f32)> {
        self.heap
            .into_iter()
            .map(|Reverse((s, slot))| (slot, s.0))
            .collect()
    }
}

impl Semantic {
    /// Makes room for slots up to `slot`.
    fn reserve(&mut self, slot: u32) {
        let n = slot as usize + 1;
        if self.scales.len() < n {
            self.scales.resize(n, 0.0);
            self.data.resize(n * self.dims, 0);
            self.codes.resize(n);
        }
    }

    /// Sets `slot`'s vector; one of another length than the first is refused (`false`).
    pub fn set(&mut self, slot: u32, vector: &[f32]) -> bool {
        if self.dims == 0 {
            self.dims = vector.len();
            self.data = vec![0; self.scales.len() * self.dims];
            self.codes = sketch::Codes::new(self.dims, self.scales.len());
        }
        if vector.len() != self.dims || self.dims == 0 {
            return false;
        }
        self.reserve(slot);
        self.clear(slot);
        let (q, scale) = quantise(vector);
        let at = slot as usize * self.dims;
        self.data[at..at + self.dims].copy_from_slice(&q);
        self.codes.set(slot as usize, &q);
        if scale != 0.0 {
            self.vectors += 1;
            self.add_to_sum(slot, scale as f64);
        }
        self.scales[slot as usize] = scale;
        true
    }

    pub fn clear(&mut self, slot: u32) {
        let Some(&scale) = self.scales.get(slot as usize) else {
            return;
        };
        if scale != 0.0 {
            self.add_to_sum(slot, -scale as f64);
            self.scales[slot as usize] = 0.0;
            self.vectors -= 1;
        }
    }

    /// Adds `slot`'s row times `scale` to the sum.
    fn add_to_sum(&mut self, slot: u32, scale: f64) {
        if self.sum.len() != self.dims {
            self.sum = vec![0.0; self.dims];
        }
        let at = slot as usize * self.dims;
        for (s, x) in self.sum.iter_mut().zip(&self.data[at..at + self.dims]) {
            *s += *x as f64 * scale;
        }
    }

    /// `query` made ready for the scan, relative to the project's common
    /// direction (the module's doc).
    pub fn probe(&self, query: &[f32]) -> Probe {
        let n = self.vectors as f32;
        if n == 0.0 || query.len() != self.dims {
            return Probe::plain(query);
        }
        let lambda = COMMON_WEIGHT * n / (n + COMMON_HALF);
        let mean: Vec<f32> = self
            .sum
            .iter()
            .map(|s| (*s / self.vectors as f64) as f32)
            .collect();
        let shifted: Vec<f32> = query.iter().zip(&mean).map(|(x, m)| x - lambda * m).collect();
        let offset = lambda * mean.iter().map(|m| m * m).sum::<f32>();
        let (q, scale) = quantise(&shifted);
        Probe { q, scale, offset }
    }

    pub fn has(&self, slot: u32) -> bool {
        self.scales.get(slot as usize).is_some_and(|s| *s != 0.0)
    }

    /// The `n` slots most similar to `query` among those with a vector that
    /// `admit` accepts, by plain cosine (the tests' view of `top_of`).
    #[cfg(test)]
    fn top(&self, query: &[f32], n: usize, admit: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        self.top_of(&Probe::plain(query), n, admit)
    }

    /// The `n` slots most similar to the probe among those with a vector
    /// that `admit` accepts and that reach `MIN_SIMILARITY`, unordered.
    /// A project of fewer than `SKETCH_MIN` vectors is compared exactly,
    /// every vector; a larger one by its nearest share by signs
    /// (`top_sketched`).
    pub fn top_of(&self, probe: &Probe, n: usize, admit: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        match candidates(self.vectors, n) {
            Some(c) => self.top_sketched(probe, n, admit, c),
            None => self.top_exact(probe, n, admit),
        }
    }

    /// [`Semantic::top_of`] comparing every vector.
    pub fn top_exact(&self, probe: &Probe, n: usize, admit: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        if probe.q.len() != self.dims || self.dims == 0 || n == 0 {
            return vec![];
        }
        let mut best = Best::new(n);
        let mut sums = [0i32; SCAN_ROWS];
        for (block, (scales, rows)) in self
            .scales
            .chunks(SCAN_ROWS)
            .zip(self.data.chunks(SCAN_ROWS * self.dims))
            .enumerate()
        {
            let sums = &mut sums[..scales.len()];
            dots(&probe.q, rows, sums);
            for (i, (scale, sum)) in scales.iter().zip(sums.iter()).enumerate() {
                if *scale == 0.0 {
                    continue;
                }
                let similarity = *sum as f32 * scale * probe.scale + probe.offset;
                let slot = (block * SCAN_ROWS + i) as u32;
                if similarity >= best.floor && admit(slot) {
                    best.push(slot, similarity);
                }
            }
        }
        best.into_vec()
    }

    /// [`Semantic::top_of`] comparing exactly only the `c` admitted vectors
    /// whose signs differ least from the probe's (and any tied with the
    /// last of them): the Hamming distance of every code first, then the
    /// nearest distances' rows, widening until `c` of them were admitted
    /// or none is left, so a filter cannot starve the result.
    pub fn top_sketched(
        &self,
        probe: &Probe,
        n: usize,
        admit: impl Fn(u32) -> bool,
        c: usize,
    ) -> Vec<(u32, f32)> {
        if probe.q.len() != self.dims || self.dims == 0 || n == 0 {
            return vec![];
        }
        let mut code = vec![0u64; sketch::words(self.dims)];
        sketch::code(&probe.q, &mut code);
        let chosen = DISTANCES.with_borrow_mut(|distance| {
            distance.resize(self.scales.len(), 0);
            self.codes.distances(&code, distance);
            // How many codes lie at each distance (0..=dims); slots without
            // a vector too, which at worst costs one more band below.
            let mut at = vec![0u32; self.dims + 1];
            for d in distance.iter() {
                at[*d as usize] += 1;
            }
            let mut chosen: Vec<u32> = Vec::with_capacity(c + c / 4);
            let mut from = 0;
            while chosen.len() < c && from < at.len() {
                // The next band of distances holding the admissions still wanted.
                let (mut to, mut held) = (from, 0);
                while to < at.len() && held < c - chosen.len() {
                    held += at[to] as usize;
                    to += 1;
                }
                for (block, run) in distance.chunks(64).enumerate() {
                    let mut within = in_band(run, from as u16, to as u16);
                    while within != 0 {
                        let slot = (block * 64) as u32 + within.trailing_zeros();
                        within &= within - 1;
                        if self.scales[slot as usize] != 0.0 && admit(slot) {
                            chosen.push(slot);
                        }
                    }
                }
                from = to;
            }
            chosen
        });
        let mut best = Best::new(n);
        for (i, &slot) in chosen.iter().enumerate() {
            // Rows far apart: ask for one a few ahead while this one is compared.
            if let Some(&ahead) = chosen.get(i + PREFETCH_AHEAD) {
                prefetch(&self.data[ahead as usize * self.dims..][..self.dims]);
            }
            let row = &self.data[slot as usize * self.dims..][..self.dims];
            let similarity =
                dot_row(&probe.q, row) as f32 * self.scales[slot as usize] * probe.scale + probe.offset;
            if similarity >= best.floor {
                best.push(slot, similarity);
            }
        }
        best.into_vec()
    }

    /// The similarity to `query` of each of `slots` (0 without a vector or
    /// below `MIN_SIMILARITY`).
    pub fn cosines(&self, query: &[f32], slots: &[u32]) -> Vec<(u32, f32)> {
        self.similarities(&Probe::plain(query), slots)
    }

    /// [`Semantic::cosines`] by the probe's similarity.
    pub fn similarities(&self, probe: &Probe, slots: &[u32]) -> Vec<(u32, f32)> {
        if probe.q.len() != self.dims || self.dims == 0 {
            return vec![];
        }
        slots
            .iter()
            .filter(|slot| self.has(**slot))
            .map(|&slot| {
                let at = slot as usize * self.dims;
                let sum = dot_row(&probe.q, &self.data[at..at + self.dims]);
                (
                    slot,
                    sum as f32 * self.scales[slot as usize] * probe.scale + probe.offset,
                )
            })
            .filter(|(_, s)| *s >= MIN_SIMILARITY)
            .collect()
    }

    /// Cosine similarities to `query` of every admitted slot at or above
    /// `MIN_SIMILARITY`, unordered (the tests' view of `top` unbounded).
    #[cfg(test)]
    fn score(&self, query: &[f32], admit: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        self.top(query, usize::MAX >> 1, admit)
    }

    /// `slot`'s vector as stored (dequantised).
    #[cfg(test)]
    fn row(&self, slot: u32) -> Vec<f32> {
        let at = slot as usize * self.dims;
        let scale = self.scales[slot as usize];
        self.data[at..at + self.dims]
            .iter()
            .map(|x| *x as f32 * scale)
            .collect()
    }

    pub fn len(&self) -> usize {
        self.vectors
    }

    pub fn is_empty(&self) -> bool {
        self.vectors == 0
    }

    pub fn bytes(&self) -> usize {
        self.data.capacity() + self.scales.capacity() * 4 + self.sum.capacity() * 8 + self.codes.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn quantised_cosine_is_close_to_the_exact_one() {
        let a = unit(
            &(0..384)
                .map(|i| ((i * 7919) % 97) as f32 - 48.0)
                .collect::<Vec<_>>(),
        );
        let b = unit(
            &(0..384)
                .map(|i| ((i * 104_729) % 89) as f32 - 44.0)
                .collect::<Vec<_>>(),
        );
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let mut s = Semantic::default();
        s.set(0, &b);
        let got = s.score(&a, |_| true);
        let approx = got.first().map(|(_, v)| *v).unwrap_or(0.0);
        if exact >= MIN_SIMILARITY {
            assert!((approx - exact).abs() < 0.01, "{approx} vs {exact}");
        }
        let mut s = Semantic::default();
        s.set(3, &a);
        let (slot, sim) = s.score(&a, |_| true)[0];
        assert_eq!(slot, 3);
        assert!((sim - 1.0).abs() < 0.01, "{sim}");
    }

    #[test]
    fn cleared_and_unadmitted_slots_are_not_scored() {
        let v = unit(&[1.0, 2.0, 3.0]);
        let mut s = Semantic::default();
        assert!(s.set(0, &v));
        assert!(s.set(5, &v));
        assert!(!s.set(1, &[1.0, 0.0]), "another length is refused");
        assert_eq!(s.len(), 2);
        s.clear(0);
        assert_eq!(s.len(), 1);
        let hits: Vec<u32> = s.score(&v, |_| true).into_iter().map(|(slot, _)| slot).collect();
        assert_eq!(hits, [5]);
        assert!(s.score(&v, |slot| slot != 5).is_empty());
        assert!(!s.has(0) && s.has(5) && !s.has(99));
        assert_eq!(s.cosines(&v, &[0, 5, 99]).len(), 1);
    }

    /// `n` routine vectors close to a common direction `c`, then one fact
    /// mostly along a distinctive direction `u`; the query is mostly `c`
    /// with some `u`. Plain cosine ranks the routine ones first.
    fn routine_and_fact(n: usize) -> (Semantic, Vec<f32>, u32) {
        let mut s = Semantic::default();
        let axis = |i: usize| {
            let mut v = vec![0.0f32; 16];
            v[i] = 1.0;
            v
        };
        for i in 0..n {
            let mut v = axis(0);
            v[2 + i % 14] = 0.15;
            s.set(i as u32, &unit(&v));
        }
        let mut fact = axis(0);
        fact[0] = 0.4;
        fact[1] = 0.92;
        s.set(n as u32, &unit(&fact));
        let mut q = axis(0);
        q[0] = 0.9;
        q[1] = 0.44;
        (s, unit(&q), n as u32)
    }

    fn rank_of(s: &Semantic, probe: &Probe, slot: u32) -> usize {
        let mut hits = s.top_of(probe, usize::MAX >> 1, |_| true);
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        hits.iter().position(|(s, _)| *s == slot).unwrap()
    }

    #[test]
    fn a_large_projects_common_direction_is_discounted_a_small_ones_is_not() {
        let (big, q, fact) = routine_and_fact(6_000);
        assert!(
            rank_of(&big, &Probe::plain(&q), fact) > 100,
            "plain cosine buries the fact"
        );
        assert_eq!(
            rank_of(&big, &big.probe(&q), fact),
            0,
            "relative to the common direction it leads"
        );
        let (small, q, fact) = routine_and_fact(20);
        assert_eq!(
            rank_of(&small, &small.probe(&q), fact),
            rank_of(&small, &Probe::plain(&q), fact),
            "20 memories: the same order as plain cosine"
        );
        // Each similarity is cos(q, d) − λ·μ·(d − μ), μ the mean of the rows.
        let rows: Vec<Vec<f32>> = (0..=fact).map(|slot| big.row(slot)).collect();
        let mu: Vec<f32> = (0..16)
            .map(|i| rows.iter().map(|r| r[i]).sum::<f32>() / rows.len() as f32)
            .collect();
        let lambda = COMMON_WEIGHT * 6_001.0 / (6_001.0 + COMMON_HALF);
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        let probe = big.probe(&q);
        for slot in [0, 7, fact] {
            let d = &rows[slot as usize];
            let want = dot(&q, d) - lambda * (dot(&mu, d) - dot(&mu, &mu));
            let got = big.similarities(&probe, &[slot])[0].1;
            assert!((got - want).abs() < 0.01, "slot {slot}: {got} vs {want}");
        }
    }

    #[test]
    fn the_discount_leaves_a_projects_mean_similarity_at_its_mean_cosine() {
        // The query's own alignment as reference (λ·μ·q) would move the
        // project's scale by λ·μ·(q − μ): here −0.03, the more the further
        // a question stands from the notes' common direction.
        let (big, q, _) = routine_and_fact(6_000);
        let slots: Vec<u32> = (0..big.len() as u32).collect();
        let mean = |probe: &Probe| {
            let all = big.similarities(probe, &slots);
            all.iter().map(|(_, s)| *s as f64).sum::<f64>() / all.len() as f64
        };
        let (plain, shifted) = (mean(&Probe::plain(&q)), mean(&big.probe(&q)));
        assert!(
            (plain - shifted).abs() < 0.01,
            "plain cosine's mean {plain}, the discounted similarity's {shifted}"
        );
    }

    #[test]
    fn the_common_direction_follows_every_set_and_clear() {
        let (direct, q, _) = routine_and_fact(300);
        let (mut churned, _, fact) = routine_and_fact(300);
        let other = unit(&[
            0.3, -0.2, 0.9, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4,
        ]);
        let originals: Vec<Vec<f32>> = (0..50).map(|i| churned.row(i)).collect();
        for i in 0..50 {
            churned.set(i, &other);
        }
        churned.set(fact + 1, &other);
        churned.clear(fact + 1);
        for (i, v) in originals.iter().enumerate() {
            churned.set(i as u32, v);
        }
        assert_eq!(churned.len(), direct.len());
        // A zero vector over a vector leaves none.
        churned.set(fact + 2, &other);
        churned.set(fact + 2, &[0.0; 16]);
        assert_eq!((churned.len(), churned.has(fact + 2)), (direct.len(), false));
        let (a, b) = (direct.probe(&q), churned.probe(&q));
        assert!((a.offset - b.offset).abs() < 1e-4, "{} vs {}", a.offset, b.offset);
        assert_eq!(a.q, b.q);
    }

    #[test]
    fn top_keeps_the_n_most_similar() {
        let mut s = Semantic::default();
        let q = unit(&[1.0, 0.0, 0.0]);
        for (slot, y) in [(0u32, 0.1f32), (1, 0.9), (2, 0.3), (3, 0.5), (4, 2.0)] {
            s.set(slot, &unit(&[1.0, y, 0.0]));
        }
        let mut top: Vec<u32> = s.top(&q, 2, |_| true).into_iter().map(|(slot, _)| slot).collect();
        top.sort();
        assert_eq!(top, [0, 2], "the two closest to the x axis");
        assert_eq!(s.top(&q, 10, |_| true).len(), 5);
        assert!(s.top(&q, 0, |_| true).is_empty());
        let x: Vec<i8> = (0..384).map(|i| (i % 255) as i8).collect();
        assert_eq!(dot(&x, &x), dot_plain(&x, &x));
    }

    #[test]
    fn the_scan_gives_every_rows_plain_sum() {
        for dims in [1, 3, 63, 64, 65, 127, 384, 1000] {
            let rows = 37;
            // Every stored value in -127..=127, as `quantise` keeps them.
            let q: Vec<i8> = (0..dims).map(|i| ((i * 37 % 255) as i32 - 127) as i8).collect();
            let data: Vec<i8> = (0..dims * rows)
                .map(|i| ((i * 91 % 253) as i32 - 126) as i8)
                .collect();
            let mut got = vec![0; rows];
            dots(&q, &data, &mut got);
            let want: Vec<i32> = data.chunks_exact(dims).map(|row| dot_plain(&q, row)).collect();
            assert_eq!(got, want, "{dims} dimensions");
            // The AVX2 scan on its own, also where the VNNI one runs.
            #[cfg(target_arch = "x86_64")]
            if has_avx2() && avx2::fits(dims) {
                let mut got = vec![0; rows];
                // SAFETY: the CPU has AVX2, and the length fits.
                unsafe { avx2::dots(&q, &data, &mut got) };
                assert_eq!(got, want, "avx2, {dims} dimensions");
            }
        }
        // The extremes: ±127 against ±127, the most a product can be.
        let q = [127i8, -127, 127, -127];
        let mut got = [0; 2];
        dots(&q, &[127, -127, -127, 127, -127, 127, -127, 127], &mut got);
        assert_eq!(got, [0, -4 * 127 * 127]);
        // The same at a length the AVX2 scan takes (no pair may saturate).
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            let q: Vec<i8> = (0..64).map(|i| if i % 3 == 0 { -127 } else { 127 }).collect();
            let rows: Vec<i8> = q
                .iter()
                .chain(q.iter().map(|v| -v).collect::<Vec<_>>().iter())
                .copied()
                .collect();
            let mut got = [0; 2];
            // SAFETY: the CPU has AVX2; 64 dimensions fit.
            unsafe { avx2::dots(&q, &rows, &mut got) };
            assert_eq!(got, [64 * 127 * 127, -64 * 127 * 127]);
        }
    }

    #[test]
    fn every_dot_product_path_gives_the_plain_loops_sum() {
        for len in [0, 1, 31, 63, 64, 65, 384, 1000] {
            let a: Vec<i8> = (0..len).map(|i| (i * 37 % 255) as u8 as i8).collect();
            let b: Vec<i8> = (0..len).map(|i| (i * 91 % 253) as u8 as i8).collect();
            let want = dot_plain(&a, &b);
            assert_eq!(dot(&a, &b), want, "dispatched, {len}");
            #[cfg(target_arch = "x86_64")]
            {
                if is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2.
                    assert_eq!(unsafe { dot_avx2(&a, &b) }, want, "avx2, {len}");
                }
                if is_x86_feature_detected!("avx512bw") {
                    // SAFETY: the CPU has AVX-512BW.
                    assert_eq!(unsafe { dot_avx512(&a, &b) }, want, "avx512, {len}");
                }
            }
        }
    }

    /// `n` vectors of 384 dimensions around a shared direction (pairwise
    /// cosine about 0.4, above the floor), from a fixed seed.
    fn clustered(n: usize) -> (Semantic, Vec<Vec<f32>>) {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let common = unit(&(0..384).map(|_| next()).collect::<Vec<_>>());
        let mut s = Semantic::default();
        let mut rows = Vec::with_capacity(n);
        for slot in 0..n {
            let noise = unit(&(0..384).map(|_| next()).collect::<Vec<_>>());
            let v = unit(
                &common
                    .iter()
                    .zip(&noise)
                    .map(|(c, e)| 0.65 * c + 0.75 * e)
                    .collect::<Vec<_>>(),
            );
            s.set(slot as u32, &v);
            rows.push(v);
        }
        (s, rows)
    }

    fn ranked(mut hits: Vec<(u32, f32)>) -> Vec<u32> {
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.into_iter().map(|(slot, _)| slot).collect()
    }

    #[test]
    fn only_a_large_project_is_scanned_by_its_signs_first() {
        assert_eq!(candidates(SKETCH_MIN - 1, 400), None);
        assert_eq!(candidates(100_000, 400), Some(6_250));
        assert_eq!(
            candidates(SKETCH_MIN, 400),
            Some(4_000),
            "never fewer than 10 × n"
        );
        assert_eq!(
            candidates(SKETCH_MIN, 4_000),
            None,
            "when that is all of them, exact"
        );
    }

    #[test]
    fn the_signs_first_scan_finds_what_the_exact_one_does() {
        let (mut s, rows) = clustered(SKETCH_MIN);
        // A question like any memory (cosine ~0.4 to the crowd), and 20
        // memories spread over the project at cosine 0.95 down to 0.55 to it.
        let q = rows[11].clone();
        let planted: Vec<u32> = (0..20u32).map(|i| 101 + i * 1_987).collect();
        for (i, slot) in planted.iter().enumerate() {
            let w = 0.95 - 0.02 * i as f32;
            let noise = &rows[(*slot as usize + 5_000) % rows.len()];
            let v: Vec<f32> = q
                .iter()
                .zip(noise)
                .map(|(a, e)| w * a + (1.0 - w * w).sqrt() * e)
                .collect();
            s.set(*slot, &unit(&v));
        }
        let probe = s.probe(&q);
        let exact = ranked(s.top_exact(&probe, 21, |_| true));
        let mut top = exact[1..].to_vec();
        top.sort();
        assert_eq!(top, planted, "the fixture: the question, then the planted ones");
        assert_eq!(ranked(s.top_of(&probe, 21, |_| true)), exact);
        // Each similarity is its row's exact one, not an estimate.
        let all = s.top_exact(&probe, usize::MAX >> 1, |_| true);
        for (slot, similarity) in s.top_of(&probe, 21, |_| true) {
            let want = all.iter().find(|(x, _)| *x == slot).unwrap().1;
            assert_eq!(similarity, want);
        }
    }

    #[test]
    fn a_filter_never_starves_the_signs_first_scan() {
        let (s, rows) = clustered(SKETCH_MIN);
        let probe = s.probe(&rows[3]);
        // One memory in 500 is admitted: far fewer than the share compared,
        // and all but one of them far from the question by their signs.
        let admit = |slot: u32| slot % 500 == 1;
        let exact = ranked(s.top_exact(&probe, 20, admit));
        assert_eq!(exact.len(), 20, "the fixture's admitted rows pass the floor");
        assert_eq!(ranked(s.top_of(&probe, 20, admit)), exact);
        // Admitting only what is farthest by signs still finds it.
        let code = |slot: usize| {
            let words = sketch::words(384);
            let mut out = vec![0u64; words];
            sketch::code(&s.data[slot * 384..(slot + 1) * 384], &mut out);
            out
        };
        let mine = code(3);
        let mut far: Vec<(u32, u32)> = (0..SKETCH_MIN)
            .map(|slot| {
                (
                    code(slot)
                        .iter()
                        .zip(&mine)
                        .map(|(a, b)| (a ^ b).count_ones())
                        .sum(),
                    slot as u32,
                )
            })
            .collect();
        far.sort();
        let farthest: Vec<u32> = far.iter().rev().take(30).map(|(_, slot)| *slot).collect();
        let admit = |slot: u32| farthest.contains(&slot);
        assert_eq!(
            ranked(s.top_of(&probe, 10, admit)),
            ranked(s.top_exact(&probe, 10, admit))
        );
    }

    #[test]
    fn cleared_vectors_never_take_a_place_in_the_signs_first_scan() {
        let (mut s, rows) = clustered(SKETCH_MIN + 2_000);
        let probe = s.probe(&rows[3]);
        // Clear the 2,000 nearest (their codes stay): the scan must look
        // past them and compare as many live vectors as it would without.
        for (slot, _) in s.top_exact(&probe, 2_000, |_| true) {
            s.clear(slot);
        }
        let c = candidates(s.len(), 50).expect("a large project");
        // What the scan should compare: the live vectors nearest by signs,
        // up to the first distance that makes `c` of them (ties included).
        let mine = {
            let mut out = vec![0u64; sketch::words(384)];
            sketch::code(&probe.q, &mut out);
            out
        };
        let mut by_signs: Vec<(u32, u32)> = (0..s.scales.len())
            .filter(|slot| s.has(*slot as u32))
            .map(|slot| {
                let mut code = vec![0u64; mine.len()];
                sketch::code(&s.data[slot * 384..(slot + 1) * 384], &mut code);
                let d = code.iter().zip(&mine).map(|(a, b)| (a ^ b).count_ones()).sum();
                (d, slot as u32)
            })
            .collect();
        by_signs.sort();
        let last = by_signs[c - 1].0;
        let compared: std::collections::HashSet<u32> = by_signs
            .iter()
            .take_while(|(d, _)| *d <= last)
            .map(|(_, slot)| *slot)
            .collect();
        let want = ranked(s.top_exact(&probe, 50, |slot| compared.contains(&slot)));
        let got = ranked(s.top_of(&probe, 50, |_| true));
        assert_eq!(got.len(), 50);
        assert!(got.iter().all(|slot| s.has(*slot)), "a cleared slot was a hit");
        assert_eq!(got, want);
    }

    #[test]
    fn the_band_mask_marks_the_distances_in_the_band() {
        let run: Vec<u16> = (0..64).map(|i| (i * 37 % 101) as u16).collect();
        for (from, to) in [(0, 0), (0, 1), (10, 40), (37, 38), (90, 385), (0, u16::MAX)] {
            for len in [64, 63, 33, 1] {
                let want = run[..len]
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| (from..to).contains(*d))
                    .fold(0u64, |m, (i, _)| m | 1 << i);
                assert_eq!(in_band(&run[..len], from, to), want, "{from}..{to}, {len}");
                assert_eq!(
                    in_band_plain(&run[..len], from, to),
                    want,
                    "plain {from}..{to}, {len}"
                );
            }
        }
    }
}
