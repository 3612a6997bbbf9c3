//! The int8 products on AMX tiles (Intel Xeon from Sapphire Rapids on).
//!
//! One `tdpbusd` multiplies a tile of up to 16 token rows × 64 bytes by a
//! tile of 64 × 16 weight bytes: 16,384 byte pairs, where AVX-512 VNNI's
//! `vpdpbusd` takes 64. The weight matrix is repacked once at load into the
//! tiles' layout (four consecutive bytes of one row side by side for 16
//! rows), in the order the kernel reads them, so a call streams the weights
//! once, front to back. The sums are the same exact integers as on the
//! other paths (test `the_simd_sums_are_the_plain_loops_sums_exactly`).
//!
//! Rust has no stable AMX intrinsics, so the instructions are written as
//! inline assembly; the tiles are the kernel's alone (no compiler-generated
//! code touches them), configured at the start of each call and released
//! at its end. Linux hands tiles to a process only when it asks
//! (`arch_prctl`), which `available` does once.

#![cfg(target_arch = "x86_64")]

use std::arch::asm;
use std::sync::LazyLock;

/// Token rows (tile rows) and output columns (i32 lanes of a tile row) a tile holds.
const ROWS: usize = 16;
/// Bytes of a tile row.
const BYTES: usize = 64;
/// Output tiles kept in registers at once (`tmm0`–`tmm3`): 64 outputs.
const GROUP: usize = 4;
/// Bytes of one packed weight tile.
const TILE: usize = ROWS * BYTES;

/// Whether this CPU has AMX-TILE and AMX-INT8, the kernel gave this
/// process its tiles, and `CAIRN_EMBED_AMX` is not `off`.
pub fn available() -> bool {
    static OK: LazyLock<bool> = LazyLock::new(|| {
        let leaf = std::arch::x86_64::__cpuid_count(7, 0);
        let (tile, int8) = (leaf.edx & (1 << 24) != 0, leaf.edx & (1 << 25) != 0);
        let off = std::env::var("CAIRN_EMBED_AMX").is_ok_and(|v| v == "off");
        tile && int8 && !off && request_tiles()
    });
    *OK
}

/// Asks Linux for the tile state (`ARCH_REQ_XCOMP_PERM`, `XFEATURE_XTILEDATA`).
#[cfg(target_os = "linux")]
fn request_tiles() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call; it only changes what this process may use.
    let r = unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) };
    if r != 0 {
        tracing::debug!(errno = %std::io::Error::last_os_error(), "AMX tiles refused; the int8 encoder uses AVX-512 or AVX2");
    }
    r == 0
}

#[cfg(not(target_os = "linux"))]
fn request_tiles() -> bool {
    false
}

/// Whether a matrix of `n` output rows can be packed (64 outputs a group).
pub fn fits(n: usize) -> bool {
    n.is_multiple_of(GROUP * ROWS)
}

/// `q` (`n` rows of `kp` signed bytes, `kp` a multiple of 64, `n` of 64)
/// in the order `dot_products` reads it: for each group of 64 outputs, for
/// each 64 bytes of the row, four tiles of 16 outputs, each tile row `r`
/// holding bytes `4r..4r + 4` of its 16 outputs side by side.
pub fn pack(q: &[i8], n: usize, kp: usize) -> Vec<i8> {
    assert!(
        fits(n) && kp.is_multiple_of(BYTES) && q.len() == n * kp,
        "packing shape"
    );
    let mut out = Vec::with_capacity(q.len());
    for group in 0..n / (GROUP * ROWS) {
        for kb in 0..kp / BYTES {
            for j in 0..GROUP {
                let first = (group * GROUP + j) * ROWS;
                for r in 0..ROWS {
                    for c in 0..ROWS {
                        let at = (first + c) * kp + kb * BYTES + 4 * r;
                        out.extend_from_slice(&q[at..at + 4]);
                    }
                }
            }
        }
    }
    out
}

/// The tile configuration `ldtilecfg` reads (palette 1).
#[repr(C, align(64))]
struct Config {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
}

impl Config {
    /// `tmm0`–`tmm3` sums and `tmm4` tokens, `m` rows each; `tmm5`–`tmm7`
    /// weights, 16 rows.
    fn new(m: usize) -> Config {
        let mut c = Config {
            palette: 1,
            start_row: 0,
            reserved: [0; 14],
            colsb: [0; 16],
            rows: [0; 16],
        };
        for t in 0..8 {
            c.colsb[t] = BYTES as u16;
            c.rows[t] = if t < 5 { m as u8 } else { ROWS as u8 };
        }
        c
    }
}

/// `sums[r][o] = Σ_i u[r][i]·q[o][i]` for `rows` token rows of `kp` bytes,
/// from the packed weights `tiles` (`pack`) of `n` outputs.
///
/// # Safety
/// `available()` returned true; `u` holds `rows × kp` bytes, `tiles` is
/// `pack`'s output for `n` × `kp`, `sums` holds `rows × n` values.
pub unsafe fn dot_products(u: &[u8], rows: usize, kp: usize, tiles: &[i8], n: usize, sums: &mut [i32]) {
    assert!(u.len() >= rows * kp && tiles.len() == n * kp && sums.len() >= rows * n && fits(n));
    let blocks = kp / BYTES;
    let (stride_u, stride_sums) = (kp, n * 4);
    let mut r0 = 0;
    while r0 < rows {
        let m = (rows - r0).min(ROWS);
        let config = Config::new(m);
        // SAFETY: the configuration is valid for palette 1.
        unsafe { asm!("ldtilecfg [{}]", in(reg) &config, options(nostack, readonly)) };
        for group in 0..n / (GROUP * ROWS) {
            // SAFETY: tiles as configured above.
            unsafe {
                asm!(
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tilezero tmm2",
                    "tilezero tmm3",
                    options(nostack, nomem)
                )
            };
            for kb in 0..blocks {
                let a = u[r0 * kp + kb * BYTES..].as_ptr();
                let b = tiles[(group * blocks + kb) * GROUP * TILE..].as_ptr();
                // SAFETY: `m` rows of 64 bytes from `a` at `kp` apart lie in
                // `u`; four tiles of 1,024 bytes from `b` lie in `tiles`.
                unsafe {
                    asm!(
                        "tileloadd tmm4, [{a} + {sa}*1]",
                        "tileloadd tmm5, [{b} + {sb}*1]",
                        "tdpbusd tmm0, tmm4, tmm5",
                        "tileloadd tmm6, [{b} + {sb}*1 + 1024]",
                        "tdpbusd tmm1, tmm4, tmm6",
                        "tileloadd tmm7, [{b} + {sb}*1 + 2048]",
                        "tdpbusd tmm2, tmm4, tmm7",
                        "tileloadd tmm5, [{b} + {sb}*1 + 3072]",
                        "tdpbusd tmm3, tmm4, tmm5",
                        a = in(reg) a,
                        sa = in(reg) stride_u,
                        b = in(reg) b,
                        sb = in(reg) BYTES,
                        options(nostack, readonly)
                    )
                };
            }
            let c = sums[r0 * n + group * GROUP * ROWS..].as_mut_ptr();
            // SAFETY: `m` rows of 64 bytes at `n × 4` apart from `c` lie in
            // `sums` (rows r0..r0 + m, outputs of this group).
            unsafe {
                asm!(
                    "tilestored [{c} + {s}*1], tmm0",
                    "tilestored [{c} + {s}*1 + 64], tmm1",
                    "tilestored [{c} + {s}*1 + 128], tmm2",
                    "tilestored [{c} + {s}*1 + 192], tmm3",
                    c = in(reg) c,
                    s = in(reg) stride_sums,
                    options(nostack)
                )
            };
        }
        r0 += m;
    }
    // SAFETY: ends this thread's use of the tiles.
    unsafe { asm!("tilerelease", options(nostack, nomem)) };
}
