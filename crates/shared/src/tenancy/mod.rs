//! Teams, projects and API tokens as stored, and the audit log every
//! administrative change writes to.

pub mod audit;
pub mod logins;
pub mod members;
pub mod project_rules;
pub mod projects;
pub mod teams;
pub mod tokens;

pub use members::{Member, Role};
pub use projects::Project;
pub use teams::Team;
pub use tokens::{ApiToken, MintedToken, NewToken, TokenKind};

/// Slugs: lowercase letters, digits, `-`, `_` (and `.` for projects), up to 63 chars.
pub fn is_valid_slug(slug: &str) -> bool {
    let mut chars = slug.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && slug.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn slugs() {
        assert!(super::is_valid_slug("default"));
        assert!(super::is_valid_slug("my-app.v2"));
        assert!(!super::is_valid_slug(""));
        assert!(!super::is_valid_slug("-x"));
        assert!(!super::is_valid_slug("Upper"));
        assert!(!super::is_valid_slug(&"a".repeat(64)));
    }
}
