//! The marked section `cairn sync` owns in an instructions file, and nothing
//! else: inserting, replacing and removing it leave every other byte as it
//! was (line endings, a byte-order mark, a missing final newline), and
//! removing a section restores the file exactly as it was before the first
//! insert — a file the insert created is deleted again.

/// Opens the section. `created` marks a file the insert created.
pub const BEGIN: &str = "<!-- cairn:begin -->";
pub const BEGIN_CREATED: &str = "<!-- cairn:begin created -->";
pub const END: &str = "<!-- cairn:end -->";

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SectionError {
    #[error("the file has a `cairn:begin` marker without `{END}` after it; fix or remove it by hand")]
    Unterminated,
    #[error("the file has more than one Cairn section; keep one by hand")]
    Several,
}

/// Where a section is: `[start, end)` of its markers, begin and end included.
struct Found {
    start: usize,
    end: usize,
    created: bool,
}

fn find(text: &str) -> Result<Option<Found>, SectionError> {
    let begins: Vec<usize> = text.match_indices("<!-- cairn:begin").map(|(i, _)| i).collect();
    match begins.as_slice() {
        [] => Ok(None),
        [start] => {
            let created = text[*start..].starts_with(BEGIN_CREATED);
            let end = text[*start..]
                .find(END)
                .map(|i| start + i + END.len())
                .ok_or(SectionError::Unterminated)?;
            Ok(Some(Found {
                start: *start,
                end,
                created,
            }))
        }
        _ => Err(SectionError::Several),
    }
}

/// The file's line ending: CRLF when it has any, else LF.
fn eol(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// The section for `lines` (already one line each), in the file's line ending.
fn render(begin: &str, lines: &[String], eol: &str) -> String {
    let mut out = String::from(begin);
    for line in lines {
        out.push_str(eol);
        out.push_str(line);
    }
    out.push_str(eol);
    out.push_str(END);
    out
}

/// `original` (`None`: no such file) with the section holding `lines`:
/// replaced in place when there is one, else appended after one line
/// ending (so a blank line separates it from text ending in a newline).
/// `prefix` starts a file the insert creates (a Cursor rule's front matter).
pub fn upsert(original: Option<&str>, lines: &[String], prefix: &str) -> Result<String, SectionError> {
    let Some(text) = original else {
        let section = render(BEGIN_CREATED, lines, "\n");
        return Ok(format!("{prefix}{section}\n"));
    };
    let eol = eol(text);
    match find(text)? {
        Some(found) => {
            let begin = if found.created { BEGIN_CREATED } else { BEGIN };
            Ok(format!(
                "{}{}{}",
                &text[..found.start],
                render(begin, lines, eol),
                &text[found.end..]
            ))
        }
        None if text.is_empty() => Ok(format!("{}{eol}", render(BEGIN, lines, eol))),
        None => Ok(format!("{text}{eol}{}{eol}", render(BEGIN, lines, eol))),
    }
}

/// `text` without its section: `Ok(None)` when the file should be deleted
/// (the insert created it), the text unchanged when it has no section.
pub fn remove(text: &str) -> Result<Option<String>, SectionError> {
    let Some(found) = find(text)? else {
        return Ok(Some(text.to_string()));
    };
    if found.created {
        return Ok(None);
    }
    let eol = eol(text);
    let before = &text[..found.start];
    let before = if found.start == 0 {
        before
    } else {
        before.strip_suffix(eol).unwrap_or(before)
    };
    let after = &text[found.end..];
    let after = after.strip_prefix(eol).unwrap_or(after);
    Ok(Some(format!("{before}{after}")))
}

/// The lines of the section in `text`, if there is one.
#[cfg(test)]
pub fn current(text: &str) -> Result<Option<Vec<String>>, SectionError> {
    Ok(find(text)?.map(|found| {
        let inner = &text[found.start..found.end - END.len()];
        inner
            .lines()
            .skip(1)
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_section_is_appended_after_a_blank_line_and_removed_exactly() {
        let original = "# Project\n\nBuild with make.\n";
        let with = upsert(Some(original), &lines(&["- decision: use sqlx"]), "").unwrap();
        assert_eq!(
            with,
            "# Project\n\nBuild with make.\n\n<!-- cairn:begin -->\n- decision: use sqlx\n<!-- cairn:end -->\n"
        );
        assert_eq!(remove(&with).unwrap().as_deref(), Some(original));
        assert_eq!(current(&with).unwrap(), Some(lines(&["- decision: use sqlx"])));
    }

    #[test]
    fn the_section_is_replaced_in_place_and_the_rest_kept() {
        let text = "top\n<!-- cairn:begin -->\n- old\n<!-- cairn:end -->\nbottom\r\n";
        let replaced = upsert(Some(text), &lines(&["- new", "- newer"]), "").unwrap();
        assert!(replaced.starts_with("top\r\n") || replaced.starts_with("top\n"));
        assert!(replaced.contains("- new"));
        assert!(replaced.ends_with("<!-- cairn:end -->\nbottom\r\n"));
        assert!(!replaced.contains("- old"));
    }

    #[test]
    fn crlf_files_keep_crlf() {
        let original = "a\r\nb\r\n";
        let with = upsert(Some(original), &lines(&["- x"]), "").unwrap();
        assert_eq!(
            with,
            "a\r\nb\r\n\r\n<!-- cairn:begin -->\r\n- x\r\n<!-- cairn:end -->\r\n"
        );
        assert_eq!(remove(&with).unwrap().as_deref(), Some(original));
    }

    #[test]
    fn a_created_file_is_deleted_on_removal() {
        let created = upsert(None, &lines(&["- x"]), "---\nalwaysApply: true\n---\n").unwrap();
        assert!(created.starts_with("---\nalwaysApply: true\n---\n<!-- cairn:begin created -->"));
        assert_eq!(remove(&created).unwrap(), None);
        // Updating keeps the mark.
        let updated = upsert(Some(&created), &lines(&["- y"]), "").unwrap();
        assert!(updated.contains(BEGIN_CREATED));
    }

    #[test]
    fn malformed_sections_are_refused_not_clobbered() {
        let open = "x\n<!-- cairn:begin -->\n- a\n";
        assert_eq!(
            upsert(Some(open), &lines(&["- b"]), ""),
            Err(SectionError::Unterminated)
        );
        assert_eq!(remove(open), Err(SectionError::Unterminated));
        let two = "<!-- cairn:begin -->\n<!-- cairn:end -->\n<!-- cairn:begin -->\n<!-- cairn:end -->\n";
        assert_eq!(upsert(Some(two), &[], ""), Err(SectionError::Several));
    }

    proptest! {
        /// Any file without markers: insert, then remove, gives it back byte for byte.
        #[test]
        fn insert_then_remove_is_the_identity(
            original in "(\u{feff})?([a-z #*\\-]{0,12}(\n|\r\n)?){0,6}",
            body in proptest::collection::vec("[a-z ]{0,20}", 0..5),
        ) {
            let with = upsert(Some(&original), &body, "").unwrap();
            prop_assert_eq!(remove(&with).unwrap(), Some(original.clone()));
        }

        /// Inserting twice is inserting once.
        #[test]
        fn upsert_is_idempotent(
            original in "([a-z #]{0,12}(\n|\r\n)?){0,6}",
            body in proptest::collection::vec("[a-z ]{0,20}", 0..5),
        ) {
            let once = upsert(Some(&original), &body, "").unwrap();
            let twice = upsert(Some(&once), &body, "").unwrap();
            prop_assert_eq!(&once, &twice);
            prop_assert_eq!(current(&once).unwrap(), Some(body));
        }
    }
}
