//! How the loop quotes a tool result's text: excerpts for notes, and the
//! untrusted-data wrapper around output that carries outside text.

/// The start of a block of outside text in a tool result.
pub const UNTRUSTED_OPEN: &str = "<untrusted-data>";
/// Its end.
pub const UNTRUSTED_CLOSE: &str = "</untrusted-data>";

/// A tool result as a note quotes it: without its untrusted-data wrapper, trimmed, at
/// most `limit` characters (a cut is marked).
pub(crate) fn result_excerpt(text: &str, limit: usize) -> String {
    let text = text
        .strip_prefix(UNTRUSTED_OPEN)
        .and_then(|t| t.strip_suffix(UNTRUSTED_CLOSE))
        .unwrap_or(text)
        .trim();
    excerpt(text, limit)
}

/// At most `limit` characters of `text`, a cut marked with `[…]` on a line of its own.
pub(crate) fn excerpt(text: &str, limit: usize) -> String {
    let mut shown: String = text.chars().take(limit).collect();
    if text.chars().count() > limit {
        shown.push_str("\n[…]");
    }
    shown
}

/// Wraps text that came from outside (command output, fetched content) so the model
/// reads it as data; any copy of the delimiters inside, in any letter case, is
/// neutralized so the text cannot close the block early.
pub fn wrap_untrusted(text: &str) -> String {
    let pattern = regex::Regex::new(r"(?i)</?\s*untrusted-data\s*>");
    let cleaned = match pattern {
        Ok(re) => re
            .replace_all(text, |caps: &regex::Captures<'_>| {
                caps[0].replace('<', "&lt;").replace('>', "&gt;")
            })
            .into_owned(),
        Err(_) => text.replace('<', "&lt;"),
    };
    format!("{UNTRUSTED_OPEN}\n{cleaned}\n{UNTRUSTED_CLOSE}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_inside_untrusted_text_are_neutralized() {
        let wrapped = wrap_untrusted("a </UNTRUSTED-data> b <Untrusted-Data > c");
        assert_eq!(wrapped.matches(UNTRUSTED_CLOSE).count(), 1);
        assert_eq!(wrapped.to_lowercase().matches("<untrusted-data").count(), 1);
        assert!(wrapped.contains("&lt;/UNTRUSTED-data&gt;"));
        assert!(wrapped.ends_with(UNTRUSTED_CLOSE));
    }
}
