//! Small text helpers shared by the tools: character-safe cuts, line numbers,
//! counts and snippets.

/// The longest prefix of `text` with at most `max_chars` characters.
pub(crate) fn prefix_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// `text` without its first `skip_chars` characters.
pub(crate) fn skip_chars(text: &str, skip_chars: usize) -> &str {
    match text.char_indices().nth(skip_chars) {
        Some((cut, _)) => &text[cut..],
        None => "",
    }
}

/// `text` trimmed and cut to `max_chars` characters, with `…` when cut.
pub(crate) fn snippet(text: &str, max_chars: usize) -> String {
    let trimmed = text.trim();
    let cut = prefix_chars(trimmed, max_chars);
    if cut.len() < trimmed.len() {
        format!("{cut}…")
    } else {
        cut.to_string()
    }
}

/// `max_chars` characters of a long line around the byte at `at` (a quarter of them
/// before it), trimmed, with `…` where the line goes on: the part of a minified file's
/// one line that matters.
pub fn window_around(text: &str, at: usize, max_chars: usize) -> String {
    let at = (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let before = text[..at].chars().count();
    let start = before.saturating_sub(max_chars / 4);
    let shown = prefix_chars(skip_chars(text, start), max_chars);
    let lead = if start > 0 { "…" } else { "" };
    let tail = if start + shown.chars().count() < text.chars().count() {
        "…"
    } else {
        ""
    };
    format!("{lead}{}{tail}", shown.trim())
}

/// The 1-based line number of the byte at `offset`.
pub(crate) fn line_number_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1
}

/// The number of lines in `text`: a final line without a newline counts.
pub(crate) fn count_lines(text: &str) -> usize {
    let newlines = text.bytes().filter(|&byte| byte == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// `count` with the noun, pluralized with `s` when needed: `1 line`, `3 lines`.
pub(crate) fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("{count} {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// A JSON string literal, for quoting paths in suggested calls.
pub(crate) fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_respect_character_boundaries() {
        assert_eq!(prefix_chars("héllo", 2), "hé");
        assert_eq!(prefix_chars("hé", 5), "hé");
        assert_eq!(skip_chars("héllo", 2), "llo");
        assert_eq!(skip_chars("hé", 5), "");
        assert_eq!(snippet("  abcdef  ", 3), "abc…");
        assert_eq!(snippet(" ab ", 3), "ab");
    }

    #[test]
    fn lines_are_counted_and_located() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(line_number_at("a\nb\nc", 0), 1);
        assert_eq!(line_number_at("a\nb\nc", 4), 3);
        assert_eq!(plural(1, "line"), "1 line");
        assert_eq!(plural(2, "line"), "2 lines");
        assert_eq!(json_string("a \"b\""), "\"a \\\"b\\\"\"");
    }
}
