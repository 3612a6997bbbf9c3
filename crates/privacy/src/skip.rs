//! Tool skip list: tools whose payloads are never stored (exact names or `prefix*`).

/// Case-insensitive (ASCII) matcher over the configured skip list.
#[derive(Debug, Clone, Default)]
pub(super) struct SkipList {
    exact: Vec<String>,
    prefixes: Vec<String>,
}

impl SkipList {
    /// Entries are trimmed; empty entries are ignored. A trailing `*` makes an
    /// entry a prefix match (`mcp__secret__*`); a lone `*` skips every tool.
    pub(super) fn new(entries: &[String]) -> Self {
        let mut list = SkipList::default();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            match entry.strip_suffix('*') {
                Some(prefix) => list.prefixes.push(prefix.to_ascii_lowercase()),
                None => list.exact.push(entry.to_ascii_lowercase()),
            }
        }
        list
    }

    pub(super) fn matches(&self, tool_name: &str) -> bool {
        let tool = tool_name.trim().as_bytes();
        self.exact.iter().any(|e| e.as_bytes().eq_ignore_ascii_case(tool))
            || self.prefixes.iter().any(|p| {
                let p = p.as_bytes();
                tool.len() >= p.len() && tool[..p.len()].eq_ignore_ascii_case(p)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> SkipList {
        SkipList::new(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn exact_names_match_case_insensitively() {
        let l = list(&["Read", " mcp__vault__get "]);
        assert!(l.matches("Read"));
        assert!(l.matches("read"));
        assert!(l.matches("READ"));
        assert!(l.matches("MCP__Vault__Get"));
        assert!(!l.matches("ReadFile"));
        assert!(!l.matches("Rea"));
        assert!(!l.matches(""));
    }

    #[test]
    fn trailing_star_is_a_prefix_wildcard() {
        let l = list(&["mcp__secret__*"]);
        assert!(l.matches("mcp__secret__read"));
        assert!(l.matches("MCP__SECRET__write"));
        assert!(l.matches("mcp__secret__"));
        assert!(!l.matches("mcp__secrets_read"));
        assert!(!l.matches("mcp__secret"));
        assert!(!l.matches("x_mcp__secret__read"));
    }

    #[test]
    fn empty_list_and_blank_entries_skip_nothing() {
        assert!(!list(&[]).matches("Bash"));
        assert!(!list(&["", "  "]).matches(""));
        assert!(!list(&["", "  "]).matches("Bash"));
    }

    #[test]
    fn lone_star_skips_everything_and_multibyte_is_safe() {
        assert!(list(&["*"]).matches("anything"));
        let l = list(&["é*", "日本"]);
        assert!(l.matches("éx"));
        assert!(l.matches("日本"));
        assert!(!l.matches("e"));
        assert!(!l.matches("日"));
    }
}
