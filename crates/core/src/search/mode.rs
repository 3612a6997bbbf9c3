//! How a query is matched (`mode`): by its words (`fulltext`), by meaning
//! (`vector`: the query's embedding against the memories'), or both fused
//! (`hybrid`, the default when the server has embeddings).
//!
//! Without embeddings, `hybrid` is answered full-text (it is a superset in
//! intent, and clients need not know the server's setup), while `vector`
//! is refused: 422 `invalid_field`, since no answer would be a vector one.

use crate::error::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Fulltext,
    Vector,
    Hybrid,
}

impl Mode {
    /// `fulltext`, `vector` or `hybrid` (`text`, `semantic` accepted too);
    /// absent or blank is `None` (the server's default).
    pub fn parse(value: Option<&str>) -> Result<Option<Mode>, Error> {
        match value.map(str::trim).unwrap_or("").to_ascii_lowercase().as_str() {
            "" => Ok(None),
            "fulltext" | "text" | "full_text" => Ok(Some(Mode::Fulltext)),
            "vector" | "semantic" => Ok(Some(Mode::Vector)),
            "hybrid" => Ok(Some(Mode::Hybrid)),
            other => Err(Error::unprocessable(
                "invalid_field",
                format!("`mode` is `fulltext`, `vector` or `hybrid`, not `{other}`"),
            )),
        }
    }

    /// The mode a search runs in: the one asked for, or the default
    /// (`hybrid` with embeddings, `fulltext` without). `vector` without
    /// embeddings is refused.
    pub fn resolve(asked: Option<Mode>, embeddings: bool) -> Result<Mode, Error> {
        match (asked, embeddings) {
            (None, true) => Ok(Mode::Hybrid),
            (None | Some(Mode::Fulltext | Mode::Hybrid), false) => Ok(Mode::Fulltext),
            (Some(Mode::Vector), false) => Err(Error::unprocessable(
                "invalid_field",
                "`mode=vector` needs embeddings, which are off on this server (use `fulltext` or `hybrid`)",
            )),
            (Some(mode), true) => Ok(mode),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Fulltext => "fulltext",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_and_defaults() {
        assert_eq!(Mode::parse(None).unwrap(), None);
        assert_eq!(Mode::parse(Some(" ")).unwrap(), None);
        assert_eq!(Mode::parse(Some("Hybrid")).unwrap(), Some(Mode::Hybrid));
        assert_eq!(Mode::parse(Some("fulltext")).unwrap(), Some(Mode::Fulltext));
        assert_eq!(Mode::parse(Some("vector")).unwrap(), Some(Mode::Vector));
        let err = Mode::parse(Some("fuzzy")).unwrap_err();
        assert_eq!((err.status.as_u16(), err.code), (422, "invalid_field"));
        assert_eq!(Mode::resolve(None, true).unwrap(), Mode::Hybrid);
        assert_eq!(Mode::resolve(None, false).unwrap(), Mode::Fulltext);
        assert_eq!(Mode::resolve(Some(Mode::Hybrid), false).unwrap(), Mode::Fulltext);
        assert_eq!(Mode::resolve(Some(Mode::Fulltext), true).unwrap(), Mode::Fulltext);
        let err = Mode::resolve(Some(Mode::Vector), false).unwrap_err();
        assert_eq!((err.status.as_u16(), err.code), (422, "invalid_field"));
    }
}
