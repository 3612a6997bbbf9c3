//! Decodes XML character references (`&amp;`, `&#39;`, `&#x27;`, …) in text,
//! leaving unknown or invalid references exactly as written.

/// The longest reference we look for, `&` to `;` inclusive. Bounding the
/// search for `;` keeps decoding linear on input full of bare `&`.
const MAX_REFERENCE_LEN: usize = 16;

/// Replaces the five predefined entities and decimal/hex character references.
/// Anything else starting with `&` (unknown names, code points that are not
/// chars, a missing `;`) is copied through unchanged.
pub(crate) fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let candidate = &rest[amp..];
        match decode_reference(candidate) {
            Some((decoded, consumed)) => {
                out.push(decoded);
                rest = &candidate[consumed..];
            }
            None => {
                out.push('&');
                rest = &candidate[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Reads one reference at the start of `text` (which starts with `&`).
/// Returns the char and the number of bytes it spans, `;` included.
fn decode_reference(text: &str) -> Option<(char, usize)> {
    let bytes = text.as_bytes();
    let window = &bytes[..bytes.len().min(MAX_REFERENCE_LEN)];
    // `;` is ASCII, so its index is a char boundary.
    let semicolon = window.iter().position(|&b| b == b';')?;
    let name = &text[1..semicolon];
    let decoded = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => decode_numeric(name)?,
    };
    Some((decoded, semicolon + 1))
}

/// `#39` or `#x27` / `#X27` → the char, if it is a valid non-NUL code point.
fn decode_numeric(name: &str) -> Option<char> {
    let number = name.strip_prefix('#')?;
    let (digits, radix) = match number.strip_prefix(['x', 'X']) {
        Some(hex) => (hex, 16),
        None => (number, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let code = u32::from_str_radix(digits, radix).ok()?;
    if code == 0 {
        return None;
    }
    char::from_u32(code)
}
