//! Token estimates for budgets: about four characters a token, rounded up.
//! Cheap and provider-neutral; budgets are targets, not billing.

pub fn estimate(text: &str) -> usize {
    chars_to_tokens(text.chars().count())
}

pub fn chars_to_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rounds_up_and_counts_chars_not_bytes() {
        assert_eq!(super::estimate(""), 0);
        assert_eq!(super::estimate("abcde"), 2);
        assert_eq!(super::estimate("ééééé"), 2);
    }
}
