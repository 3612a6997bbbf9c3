//! Parsing what clients send (HTTP query strings, MCP tool arguments) into
//! search terms, each refusal a 422 with the code `invalid_field`.

use chrono::{DateTime, NaiveDate, Utc};

use super::Order;
use crate::error::Error;

/// Results per page.
pub const MAX_LIMIT: i64 = 100;
/// Observations on either side of a timeline's anchor.
pub const MAX_DEPTH: i64 = 50;
/// Ids fetched at once.
pub const MAX_IDS: usize = 100;
/// Items in a comma-separated list (types, concepts).
const MAX_LIST: usize = 32;

fn invalid(message: String) -> Error {
    Error::unprocessable("invalid_field", message)
}

/// `relevance` (default), `newest` or `oldest`; `date_desc`/`date_asc` are accepted too.
pub fn order(value: Option<&str>) -> Result<Order, Error> {
    match value.map(str::trim).unwrap_or("") {
        "" | "relevance" => Ok(Order::Relevance),
        "newest" | "date_desc" => Ok(Order::Newest),
        "oldest" | "date_asc" => Ok(Order::Oldest),
        other => Err(invalid(format!(
            "`orderBy` is `relevance`, `newest` or `oldest`, not `{other}`"
        ))),
    }
}

/// A comma-separated list, blanks dropped (`bugfix, feature` → `[bugfix, feature]`).
pub fn list(field: &str, value: Option<&str>) -> Result<Vec<String>, Error> {
    let items: Vec<String> = value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if items.len() > MAX_LIST {
        return Err(invalid(format!("`{field}` lists more than {MAX_LIST} values")));
    }
    if let Some(long) = items.iter().find(|s| s.len() > 200) {
        let head: String = long.chars().take(16).collect();
        return Err(invalid(format!(
            "`{field}` has a value over 200 bytes: `{head}…`"
        )));
    }
    Ok(items)
}

/// A point in time: RFC 3339 (`2026-03-01T12:00:00Z`), integer epoch
/// milliseconds, or a date (`2026-03-01`, UTC), which as `end` means the
/// end of that day.
pub fn time(field: &str, value: &str, end: bool) -> Result<DateTime<Utc>, Error> {
    let value = value.trim();
    let bad = || {
        invalid(format!(
            "`{field}` is an RFC 3339 time, a date (YYYY-MM-DD) or epoch milliseconds, not `{value}`"
        ))
    };
    if !value.is_empty() && value.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit()) {
        let ms: i64 = value.parse().map_err(|_| bad())?;
        return cairn_shared::time::from_epoch_ms(ms).ok_or_else(bad);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(value) {
        return cairn_shared::time::storable(t.with_timezone(&Utc)).ok_or_else(bad);
    }
    let day = NaiveDate::parse_from_str(value, "%Y-%m-%d").map_err(|_| bad())?;
    let t = if end {
        day.and_hms_micro_opt(23, 59, 59, 999_999)
    } else {
        day.and_hms_opt(0, 0, 0)
    };
    cairn_shared::time::storable(t.ok_or_else(bad)?.and_utc()).ok_or_else(bad)
}

pub fn optional_time(field: &str, value: Option<&str>, end: bool) -> Result<Option<DateTime<Utc>>, Error> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| time(field, v, end))
        .transpose()
}

/// `1..=MAX_LIMIT`, or `default` when absent.
pub fn limit(value: Option<i64>, default: i64) -> Result<i64, Error> {
    let limit = value.unwrap_or(default);
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(invalid(format!(
            "`limit` must be between 1 and {MAX_LIMIT}, not {limit}"
        )))
    }
}

/// `0..=MAX_DEPTH`, or `default` when absent.
pub fn depth(field: &str, value: Option<i64>, default: i64) -> Result<i64, Error> {
    let depth = value.unwrap_or(default);
    if (0..=MAX_DEPTH).contains(&depth) {
        Ok(depth)
    } else {
        Err(invalid(format!(
            "`{field}` must be between 0 and {MAX_DEPTH}, not {depth}"
        )))
    }
}

/// A comma-separated list of at most `MAX_IDS` UUIDs.
pub fn ids(field: &str, value: &str) -> Result<Vec<uuid::Uuid>, Error> {
    let ids = list_unbounded(value)
        .map(|s| {
            s.parse()
                .map_err(|_| invalid(format!("`{field}` holds `{s}`, which is not a UUID")))
        })
        .collect::<Result<Vec<uuid::Uuid>, _>>()?;
    if ids.len() > MAX_IDS {
        return Err(invalid(format!("`{field}` names more than {MAX_IDS} ids")));
    }
    Ok(ids)
}

fn list_unbounded(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn times_in_three_spellings() {
        let t = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        assert_eq!(time("d", "2026-03-01T12:00:00Z", false).unwrap(), t);
        assert_eq!(time("d", "2026-03-01T13:00:00+01:00", false).unwrap(), t);
        assert_eq!(time("d", &t.timestamp_millis().to_string(), false).unwrap(), t);
        assert_eq!(
            time("d", "2026-03-01", false).unwrap(),
            Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap()
        );
        assert_eq!(
            time("d", "2026-03-01", true).unwrap(),
            Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap() - chrono::Duration::microseconds(1)
        );
        for bad in ["yesterday", "2026-13-01", "99999999999999999999", "-", "1e9", ""] {
            let err = time("dateStart", bad, false).unwrap_err();
            assert_eq!((err.status.as_u16(), err.code), (422, "invalid_field"), "{bad}");
        }
        assert_eq!(optional_time("d", Some("  "), false).unwrap(), None);
    }

    #[test]
    fn limits_orders_lists_and_ids() {
        assert_eq!(limit(None, 20).unwrap(), 20);
        assert!(limit(Some(0), 20).is_err() && limit(Some(101), 20).is_err());
        assert_eq!(order(Some("newest")).unwrap(), Order::Newest);
        assert!(order(Some("best")).is_err());
        assert_eq!(
            list("type", Some(" bugfix, ,feature ")).unwrap(),
            ["bugfix", "feature"]
        );
        assert!(list("type", Some(&"a,".repeat(40))).is_err());
        let id = uuid::Uuid::now_v7();
        assert_eq!(ids("ids", &format!("{id}, {id}")).unwrap(), [id, id]);
        assert!(ids("ids", "nope").is_err());
        assert!(depth("before", Some(51), 5).is_err());
    }
}
