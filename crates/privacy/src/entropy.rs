//! Whether a value reads as a random token rather than a word, an identifier or a path.
//!
//! All required: long enough; letters and digits mixed in short runs
//! (`x7Gk2q…`, not `sha256_hmac_v2` or `AccessToken2024`); not an identifier
//! path (`self.to_sec1_der`, `D3D11_MESSAGE_ID`); most letters outside words
//! (`ID3D11DeviceChild_Impl` is made of words); and a Shannon entropy per
//! character near what random text of that length and alphabet gives.

/// Shortest value considered, in bytes (trailing `=` padding not counted).
pub(super) const MIN_LEN: usize = 16;

/// Largest mean length of the letter and digit runs of a token. Random
/// base64, hex and alphanumerics average about 2; identifiers are made of
/// words (`derive`, `secret`, `Token`) and average 4 or more.
const MAX_MEAN_RUN: f64 = 3.0;

/// Largest share of the letters that may sit in words (`Device`, `impl`: four
/// or more letters, at most the first one a capital). Random base64 puts
/// about one letter in six in such runs.
const MAX_WORD_SHARE: f64 = 0.5;

/// Least Shannon entropy, in bits per character, as a share of the most a
/// string of that length and alphabet can have: `log2(min(len, alphabet))`,
/// where the alphabet is guessed from the classes present (hex digits, all
/// letters, digits, each other symbol).
const MIN_ENTROPY_SHARE: f64 = 0.75;

/// True when `value` looks like a generated secret.
pub(super) fn is_high_entropy(value: &str) -> bool {
    let value = value.trim_end_matches('=');
    value.len() >= MIN_LEN
        && value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_alphabetic())
        && mean_run(value) <= MAX_MEAN_RUN
        && !is_identifier_path(value)
        && word_share(value) < MAX_WORD_SHARE
        && shannon(value) >= MIN_ENTROPY_SHARE * (value.len().min(alphabet(value)) as f64).log2()
}

/// Size of the alphabet `value` seems drawn from: 6 or 26 for each letter
/// case (hex letters only, or any), 10 for digits, 1 for each other byte seen.
pub(super) fn alphabet(value: &str) -> usize {
    let letters = |range: std::ops::RangeInclusive<u8>, hex: std::ops::RangeInclusive<u8>| {
        let used: Vec<u8> = value.bytes().filter(|b| range.contains(b)).collect();
        match (used.is_empty(), used.iter().all(|b| hex.contains(b))) {
            (true, _) => 0,
            (false, true) => 6,
            (false, false) => 26,
        }
    };
    let digits = if value.bytes().any(|b| b.is_ascii_digit()) {
        10
    } else {
        0
    };
    let mut others: Vec<u8> = value.bytes().filter(|b| !b.is_ascii_alphanumeric()).collect();
    others.sort_unstable();
    others.dedup();
    letters(b'a'..=b'z', b'a'..=b'f') + letters(b'A'..=b'Z', b'A'..=b'F') + digits + others.len()
}

/// `self.to_sec1_der`, `cfg.k8s_api_v1`, `D3D11_MESSAGE_ID`: words and digits
/// of one letter case joined by `_` or `.`, every part starting with a letter.
fn is_identifier_path(value: &str) -> bool {
    let one_case = |letter: fn(&u8) -> bool| {
        value
            .bytes()
            .all(|b| letter(&b) || b.is_ascii_digit() || b == b'_' || b == b'.')
    };
    value.contains(['_', '.'])
        && (one_case(u8::is_ascii_lowercase) || one_case(u8::is_ascii_uppercase))
        && value
            .split(['_', '.'])
            .filter(|part| !part.is_empty())
            .all(|part| part.as_bytes()[0].is_ascii_alphabetic())
}

/// Share of the letters of `value` that are in words: runs of four or more
/// lowercase letters, or of a capital and three or more lowercase letters.
/// Hex (letters `a`-`f` only) has no words: `afad` in a UUID is not one.
pub(super) fn word_share(value: &str) -> f64 {
    let bytes = value.as_bytes();
    if bytes
        .iter()
        .all(|b| !b.is_ascii_alphabetic() || matches!(b.to_ascii_lowercase(), b'a'..=b'f'))
    {
        return 0.0;
    }
    let letters = bytes.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let mut in_words = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if bytes[i].is_ascii_uppercase() {
            i += 1;
        }
        while i < bytes.len() && bytes[i].is_ascii_lowercase() {
            i += 1;
        }
        if i - start >= 4 {
            in_words += i - start;
        }
        if i == start {
            i += 1;
        }
    }
    if letters == 0 {
        return 0.0;
    }
    in_words as f64 / letters as f64
}

/// Shannon entropy of the bytes of `value`, in bits per byte.
pub(super) fn shannon(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = value.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / len;
            -p * p.log2()
        })
        .sum()
}

/// Mean length of the runs a word splitter would see: lowercase letters
/// (with one leading capital, as in `Token`), capitals, digits.
pub(super) fn mean_run(value: &str) -> f64 {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Lower,
        Upper,
        Digit,
        Other,
    }
    let class = |b: u8| match b {
        b'a'..=b'z' => Class::Lower,
        b'A'..=b'Z' => Class::Upper,
        b'0'..=b'9' => Class::Digit,
        _ => Class::Other,
    };
    let (mut runs, mut chars) = (0u32, 0u32);
    let mut previous = Class::Other;
    let mut run_len = 0u32;
    for b in value.bytes() {
        let current = class(b);
        // A capital followed by lowercase letters is one word (`Token`).
        let continues =
            current == previous || (previous == Class::Upper && current == Class::Lower && run_len == 1);
        if current != Class::Other {
            chars += 1;
            if continues {
                run_len += 1;
            } else {
                runs += 1;
                run_len = 1;
            }
        }
        previous = current;
    }
    if runs == 0 {
        return 0.0;
    }
    f64::from(chars) / f64::from(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_values_are_high_entropy() {
        for value in [
            "x7Gk2qLm9ZrT4vBn",
            "3f9a1c7e5b2d4f608a1b3c5d7e9f0a2b",
            "550e8400-e29b-41d4-a716-446655440000",
            "AgEIcHlwaS5vcmcCJGQ4ZjRhNjI5LTk3",
            "FwoGZXIvYXdzEJr//////////wEaDG5vbmVAZXhhbXBsZQ==",
        ] {
            assert!(
                is_high_entropy(value),
                "{value}: {} {}",
                mean_run(value),
                shannon(value)
            );
        }
    }

    #[test]
    fn words_identifiers_and_paths_are_not() {
        for value in [
            "derive_secret_v2",
            "AccessToken2024Refreshable",
            "refresh2authorization_code",
            "rate_limiter_2048",
            "github.com/acme/auth-service/v2/internal",
            "0123456789012345",
            "abcdefghijklmnopqrstuvwxyz",
            "aaaaaaaa11111111",
            "x7Gk2qLm9ZrT4vB",
            "Summer2024Holiday",
            "self.to_sec1_der",
            "cfg.k8s_api_v1_token_v2",
            "D3D11_MESSAGE_ID",
            "ID3D11DeviceChild_Impl",
        ] {
            assert!(
                !is_high_entropy(value),
                "{value}: {} {}",
                mean_run(value),
                shannon(value)
            );
        }
    }

    #[test]
    fn entropy_and_runs() {
        assert_eq!(shannon(""), 0.0);
        assert_eq!(shannon("aaaa"), 0.0);
        assert!((shannon("abcd") - 2.0).abs() < 1e-9);
        assert_eq!(mean_run(""), 0.0);
        assert!((mean_run("Token2024") - 4.5).abs() < 1e-9);
        assert!((mean_run("aB3") - 1.0).abs() < 1e-9);
        assert!((word_share("ID3D11DeviceChild_Impl") - 15.0 / 18.0).abs() < 1e-9);
        assert_eq!(word_share("x7Gk2qLm9ZrT4vBn"), 0.0);
        assert_eq!(word_share("1234"), 0.0);
        assert_eq!(word_share("891e393ecfe6-afad"), 0.0);
        assert_eq!(alphabet("deadbeef42"), 16);
        assert_eq!(alphabet("550e8400-e29b-41d4"), 17);
        assert_eq!(alphabet("Zz9+/"), 64);
    }
}
