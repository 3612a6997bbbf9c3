//! Conversions between stored timestamps and the wire's epoch milliseconds.

use chrono::{DateTime, TimeZone, Utc};

pub fn to_epoch_ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub fn opt_epoch_ms(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.map(to_epoch_ms)
}

/// `None` for values Postgres cannot store (see [`storable`]).
pub fn from_epoch_ms(ms: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single().and_then(storable)
}

/// The time, if Postgres' `timestamptz` holds it: 4713 BC to 294276 AD.
/// chrono reaches further, and a time outside this range fails the
/// statement, so every time taken from a request passes through here.
pub fn storable(t: DateTime<Utc>) -> Option<DateTime<Utc>> {
    use chrono::Datelike;
    (-4712..=294_275).contains(&t.year()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_postgres_cannot_store_are_refused() {
        assert!(from_epoch_ms(0).is_some());
        assert!(from_epoch_ms(-210_000_000_000_000).is_some(), "4685 BC is stored");
        assert!(from_epoch_ms(-220_000_000_000_000).is_none(), "5002 BC is not");
        assert!(from_epoch_ms(-9_000_000_000_000_000).is_none());
        assert!(from_epoch_ms(i64::MAX).is_none());
        assert!(from_epoch_ms(9_000_000_000_000_000).is_none());
        assert!(from_epoch_ms(-100_000_000_000_000).is_some(), "1200 BC is stored");
    }
}
