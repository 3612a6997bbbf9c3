//! What a failed attempt becomes: a later attempt (exponential backoff with
//! jitter, or the provider's Retry-After), stored in `next_attempt_at`, or a
//! failed job. Nothing is slept in memory. Every delay is bounded, whatever a
//! provider or the configuration says: a provider waits at most
//! [`MAX_RETRY_AFTER`], and no delay exceeds [`MAX_DELAY`].

use std::time::Duration;

use rand::Rng;

use crate::generation::provider::{ErrorClass, ProviderError};

/// The longest wait a provider's Retry-After gets (an absurd one, say
/// `99999999999999`, is read as this).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);
/// No retry is scheduled further away, whatever the configuration.
pub const MAX_DELAY: Duration = Duration::from_secs(7 * 24 * 3600);

#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// The first delay of a transient or parse error; doubled per attempt.
    pub base: Duration,
    /// No delay is longer (except the provider's own Retry-After).
    pub max: Duration,
    /// The first delay after a quota error (credits rarely return in seconds).
    pub quota: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base: Duration::from_secs(10),
            max: Duration::from_secs(3600),
            quota: Duration::from_secs(900),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    RetryIn(Duration),
    Fail,
}

impl RetryPolicy {
    /// `attempts` counts the attempt that just failed.
    pub fn decide(&self, error: &ProviderError, attempts: i32, max_attempts: i32) -> Decision {
        if attempts >= max_attempts {
            return Decision::Fail;
        }
        let base = match error.class {
            ErrorClass::Auth | ErrorClass::Unrecoverable => return Decision::Fail,
            ErrorClass::Quota => self.quota,
            ErrorClass::Transient | ErrorClass::ParseError | ErrorClass::RateLimit => self.base,
        };
        let backoff = jittered(exponential(base, attempts, self.max.max(base)).min(MAX_DELAY));
        let delay = match (error.class, error.retry_after) {
            // The provider said when; never earlier than that, never sooner than our own backoff floor.
            (ErrorClass::RateLimit, Some(after)) => {
                let after = after.min(MAX_RETRY_AFTER);
                after.max(backoff.min(after.saturating_mul(2)))
            }
            _ => backoff,
        };
        Decision::RetryIn(delay.min(MAX_DELAY))
    }
}

/// `base · 2^(attempts-1)`, capped.
fn exponential(base: Duration, attempts: i32, cap: Duration) -> Duration {
    let doublings = attempts.saturating_sub(1).clamp(0, 20) as u32;
    base.saturating_mul(1 << doublings).min(cap)
}

/// Between 80% and 120% of `d`, so retries of a burst spread out.
fn jittered(d: Duration) -> Duration {
    Duration::try_from_secs_f64(d.as_secs_f64() * rand::rng().random_range(0.8..=1.2)).unwrap_or(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(class: ErrorClass, retry_after: Option<u64>) -> ProviderError {
        ProviderError {
            class,
            message: "x".into(),
            retry_after: retry_after.map(Duration::from_secs),
        }
    }

    fn delay(d: Decision) -> Duration {
        match d {
            Decision::RetryIn(d) => d,
            Decision::Fail => panic!("expected a retry"),
        }
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let p = RetryPolicy::default();
        let first = delay(p.decide(&err(ErrorClass::Transient, None), 1, 5));
        assert!((8..=12).contains(&first.as_secs()), "{first:?}");
        let third = delay(p.decide(&err(ErrorClass::Transient, None), 3, 5));
        assert!((32..=48).contains(&third.as_secs()), "{third:?}");
        let capped = delay(p.decide(&err(ErrorClass::Transient, None), 19, 50));
        assert!(capped <= Duration::from_secs(4320), "{capped:?}");
    }

    #[test]
    fn classes_decide_retry_or_fail() {
        let p = RetryPolicy::default();
        assert_eq!(p.decide(&err(ErrorClass::Auth, None), 1, 5), Decision::Fail);
        assert_eq!(
            p.decide(&err(ErrorClass::Unrecoverable, None), 1, 5),
            Decision::Fail
        );
        assert_eq!(p.decide(&err(ErrorClass::Transient, None), 5, 5), Decision::Fail);
        let quota = delay(p.decide(&err(ErrorClass::Quota, None), 1, 5));
        assert!(quota >= Duration::from_secs(720), "{quota:?}");
        let parse = delay(p.decide(&err(ErrorClass::ParseError, None), 1, 5));
        assert!(parse < Duration::from_secs(15), "{parse:?}");
    }

    #[test]
    fn retry_after_is_honoured() {
        let p = RetryPolicy::default();
        let d = delay(p.decide(&err(ErrorClass::RateLimit, Some(30)), 1, 5));
        assert!(
            d >= Duration::from_secs(30) && d <= Duration::from_secs(60),
            "{d:?}"
        );
        let d = delay(p.decide(&err(ErrorClass::RateLimit, Some(1)), 1, 5));
        assert!(
            d >= Duration::from_secs(1) && d <= Duration::from_secs(2),
            "{d:?}"
        );
    }

    #[test]
    fn absurd_waits_are_bounded() {
        let p = RetryPolicy::default();
        for after in [99_999_999_999_999, u64::MAX] {
            let d = delay(p.decide(&err(ErrorClass::RateLimit, Some(after)), 1, 5));
            assert_eq!(d, MAX_RETRY_AFTER, "{after}");
        }
        let e = ProviderError {
            retry_after: Some(Duration::MAX),
            ..err(ErrorClass::RateLimit, None)
        };
        assert_eq!(delay(p.decide(&e, 1, 5)), MAX_RETRY_AFTER);
        let huge = RetryPolicy {
            base: Duration::MAX,
            max: Duration::MAX,
            quota: Duration::MAX,
        };
        for class in [ErrorClass::Transient, ErrorClass::Quota, ErrorClass::RateLimit] {
            for attempts in [1, 30, i32::MAX - 1] {
                let d = delay(huge.decide(&err(class, None), attempts, i32::MAX));
                assert!(d <= MAX_DELAY, "{class:?} {attempts}: {d:?}");
            }
        }
        let d = delay(p.decide(&err(ErrorClass::Transient, None), i32::MAX - 1, i32::MAX));
        assert!(d <= Duration::from_secs(4320), "{d:?}");
    }
}
