//! File paths as agents report them: absolute in the agent's working
//! directory, or already relative to it.

/// `path` relative to `cwd` when it lies under it, else as given.
pub fn relative<'a>(path: &'a str, cwd: Option<&str>) -> &'a str {
    cwd.map(|c| c.trim_end_matches('/'))
        .filter(|c| !c.is_empty())
        .and_then(|c| path.strip_prefix(c))
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::relative;

    #[test]
    fn paths_under_the_working_directory_are_made_relative() {
        assert_eq!(relative("/w/app/src/a.rs", Some("/w/app")), "src/a.rs");
        assert_eq!(relative("/w/app/src/a.rs", Some("/w/app/")), "src/a.rs");
        assert_eq!(
            relative("/w/application/a.rs", Some("/w/app")),
            "/w/application/a.rs"
        );
        assert_eq!(relative("/elsewhere/a.rs", Some("/w/app")), "/elsewhere/a.rs");
        assert_eq!(relative("src/a.rs", None), "src/a.rs");
        assert_eq!(relative("/w/app", Some("/w/app")), "/w/app");
        assert_eq!(relative("/a.rs", Some("/")), "/a.rs");
    }
}
