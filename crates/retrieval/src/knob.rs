//! Tuning knobs: a constant that an environment variable may replace for
//! one run, so that a benchmark can sweep it without a rebuild.

use std::ops::RangeBounds;

/// `name`'s value when it is set, a number and within `range`; else
/// `default`. Callers read it once (behind a `LazyLock`).
pub fn f32_env(name: &str, default: f32, range: impl RangeBounds<f32>) -> f32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<f32>().ok())
        .filter(|x| range.contains(x))
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knob_outside_its_range_or_not_a_number_keeps_the_default() {
        // SAFETY: this test's own variables; std serialises its own reads
        // and writes of the environment, and no C code here reads it.
        unsafe {
            std::env::set_var("CAIRN_KNOB_TEST_A", "0.3");
            std::env::set_var("CAIRN_KNOB_TEST_B", "1.5");
            std::env::set_var("CAIRN_KNOB_TEST_C", "high");
        }
        assert_eq!(f32_env("CAIRN_KNOB_TEST_A", 0.75, 0.0..=1.0), 0.3);
        assert_eq!(f32_env("CAIRN_KNOB_TEST_B", 0.75, 0.0..=1.0), 0.75);
        assert_eq!(f32_env("CAIRN_KNOB_TEST_C", 0.75, 0.0..=1.0), 0.75);
        assert_eq!(f32_env("CAIRN_KNOB_TEST_UNSET", 0.75, 0.0..=1.0), 0.75);
        assert_eq!(f32_env("CAIRN_KNOB_TEST_A", 0.75, 0.5..1.0), 0.75);
    }
}
