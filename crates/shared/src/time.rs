//! Conversions between stored timestamps and the wire's epoch milliseconds.

use chrono::{DateTime, TimeZone, Utc};

pub fn to_epoch_ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub fn opt_epoch_ms(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.map(to_epoch_ms)
}

/// `None` for values outside chrono's range.
pub fn from_epoch_ms(ms: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt(ms).single()
}
