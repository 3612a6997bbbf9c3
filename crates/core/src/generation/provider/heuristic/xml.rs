//! Writing COMPAT.md §3 XML: escaped text, indented elements.

/// Escapes `&`, `<` and `>` in element text.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// An element being written, one child per line, indented by two spaces.
pub(super) struct Element {
    name: &'static str,
    body: String,
}

impl Element {
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            body: String::new(),
        }
    }

    /// Adds `<name>text</name>`.
    pub fn text(mut self, name: &str, text: &str) -> Self {
        self.body
            .push_str(&format!("\n  <{name}>{}</{name}>", escape(text)));
        self
    }

    /// Adds `<name><item>…</item>…</name>`, one item per line.
    pub fn list(mut self, name: &str, item: &str, items: &[String]) -> Self {
        self.body.push_str(&format!("\n  <{name}>"));
        for text in items {
            self.body
                .push_str(&format!("\n    <{item}>{}</{item}>", escape(text)));
        }
        if !items.is_empty() {
            self.body.push_str("\n  ");
        }
        self.body.push_str(&format!("</{name}>"));
        self
    }

    /// The element's text, ending with a newline.
    pub fn finish(self) -> String {
        format!("<{0}>{1}\n</{0}>\n", self.name, self.body)
    }
}

/// `<skip_summary reason="…"/>`, the reason escaped for an attribute.
pub(super) fn skip(reason: &str) -> String {
    format!(
        "<skip_summary reason=\"{}\"/>\n",
        escape(reason).replace('"', "&quot;")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_escaped_and_indented() {
        let xml = Element::new("summary")
            .text("request", "fix Vec<u8> & co")
            .list("files", "file", &["a<b".into()])
            .list("none", "file", &[])
            .finish();
        assert_eq!(
            xml,
            "<summary>\n  <request>fix Vec&lt;u8&gt; &amp; co</request>\n  <files>\n    <file>a&lt;b</file>\n  </files>\n  <none></none>\n</summary>\n"
        );
        assert_eq!(
            skip("no \"tool\" activity"),
            "<skip_summary reason=\"no &quot;tool&quot; activity\"/>\n"
        );
    }
}
