//! The opaque page cursor: base64url (no padding) of `{"o": offset, "t": as_of}`,
//! `as_of` in microseconds since the epoch (Postgres' own precision).
//!
//! Every page of one search is answered as of the first page's time: rows
//! created after `as_of` are left out and recency is measured from it, so
//! scores and order do not move while new memories arrive, and an offset
//! names the same place on every page. The cursor carries no secret: a
//! tampered one can only move within the caller's own project.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// Offsets past this are refused (a walk of 100-hit pages reaches it after 10,000 pages).
pub const MAX_OFFSET: i64 = 1_000_000;
/// A cursor longer than this is not one of ours.
const MAX_LEN: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub offset: i64,
    /// `None`: as of now (a cursor made from a bare offset, e.g. MCP's `offset`).
    pub as_of: Option<DateTime<Utc>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    o: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    t: Option<i64>,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let wire = Wire {
            o: self.offset,
            t: self.as_of.map(|t| t.timestamp_micros()),
        };
        base64url::encode(&serde_json::to_vec(&wire).expect("a cursor serialises"))
    }

    pub fn decode(text: &str) -> Result<Cursor, Error> {
        let invalid = || Error::unprocessable("invalid_cursor", "`cursor` is not a cursor this server made");
        if text.len() > MAX_LEN {
            return Err(invalid());
        }
        let bytes = base64url::decode(text.trim()).ok_or_else(invalid)?;
        let wire: Wire = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        if !(0..=MAX_OFFSET).contains(&wire.o) {
            return Err(invalid());
        }
        let as_of = match wire.t {
            Some(micros) => Some(
                DateTime::from_timestamp_micros(micros)
                    .and_then(cairn_shared::time::storable)
                    .ok_or_else(invalid)?,
            ),
            None => None,
        };
        Ok(Cursor {
            offset: wire.o,
            as_of,
        })
    }
}

/// A cursor that starts at `offset`, as of the time it is used.
pub fn at_offset(offset: i64) -> String {
    Cursor { offset, as_of: None }.encode()
}

/// RFC 4648 §5 base64url without padding; small enough not to need a crate.
mod base64url {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | ((*b as u32) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }

    pub fn decode(text: &str) -> Option<Vec<u8>> {
        if text.len() % 4 == 1 {
            return None;
        }
        let mut out = Vec::with_capacity(text.len() * 3 / 4);
        for chunk in text.as_bytes().chunks(4) {
            let mut n = 0u32;
            for (i, c) in chunk.iter().enumerate() {
                let v = ALPHABET.iter().position(|a| a == c)? as u32;
                n |= v << (18 - 6 * i);
            }
            let bytes = chunk.len() - 1;
            // Bits below the last whole byte must be zero, so each byte string has one encoding.
            if n & ((1 << (24 - 8 * bytes)) - 1) != 0 {
                return None;
            }
            for i in 0..bytes {
                out.push((n >> (16 - 8 * i)) as u8);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips_every_length() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37).wrapping_add(200)).collect();
            let text = base64url::encode(&bytes);
            assert!(!text.contains(['+', '/', '=']), "{text}");
            assert_eq!(base64url::decode(&text).as_deref(), Some(&bytes[..]), "{text}");
        }
        assert_eq!(base64url::encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url::encode(b"fo"), "Zm8");
        assert_eq!(base64url::encode(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn cursors_round_trip() {
        let at = DateTime::from_timestamp_micros(1_780_000_000_123_456).unwrap();
        for cursor in [
            Cursor {
                offset: 0,
                as_of: None,
            },
            Cursor {
                offset: 30,
                as_of: Some(at),
            },
        ] {
            assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), cursor);
        }
        assert_eq!(Cursor::decode(&at_offset(7)).unwrap().offset, 7);
    }

    #[test]
    fn anything_else_is_invalid_cursor() {
        let bad = [
            "",
            "!!!",
            "abcde",
            "e30",                                    // {}
            &base64url::encode(b"{\"o\":-1}"),        // negative offset
            &base64url::encode(b"{\"o\":1,\"x\":2}"), // unknown field
            &base64url::encode(b"{\"o\":1,\"t\":9223372036854775807}"),
            &base64url::encode(b"{\"o\":\"1\"}"),
            &"A".repeat(400),
        ];
        for text in bad {
            let err = Cursor::decode(text).unwrap_err();
            assert_eq!((err.status.as_u16(), err.code), (422, "invalid_cursor"), "{text}");
        }
    }
}
