//! What `edit_file` says when `old_string` matches several places or none: the
//! places, or the nearest candidates and why they differ.

use crate::text::{json_string, line_number_at, snippet};

/// Matches listed at most when `old_string` is ambiguous.
const LISTED_MATCHES: usize = 10;
/// Similar lines offered when `old_string` is not found.
const NEAREST_LINES: usize = 3;
/// Characters of a line shown in a snippet.
const SNIPPET_CHARS: usize = 80;
/// Places given a ready unique `old_string`.
const UNIQUE_SHOWN: usize = 3;
/// Lines added at most above or below a place to make it unique.
const CONTEXT_LINES: usize = 3;

/// The reply when `old_string` (`old`) occurs at each of `starts` (byte offsets):
/// the places, and for the first few an `old_string` of whole lines that occurs
/// only there, ready to copy.
pub(crate) fn ambiguity_reply(content: &str, starts: &[usize], old: &str, shown: &str) -> String {
    let lines: Vec<usize> = starts
        .iter()
        .map(|&start| line_number_at(content, start))
        .collect();
    let numbers: Vec<String> = lines.iter().map(usize::to_string).collect();
    let mut reply = format!(
        "old_string occurs {} times in `{shown}` (lines {}):\n",
        starts.len(),
        numbers.join(", ")
    );
    // Where the places lie in different blocks (`class Http:`, `[server]`), each says
    // which: the task names the block more often than the lines around the match.
    let text_lines: Vec<&str> = content.lines().collect();
    let blocks: Vec<Option<&str>> = lines
        .iter()
        .map(|&line| enclosing(&text_lines, line))
        .collect();
    let distinct = blocks.iter().all(Option::is_some)
        && blocks
            .iter()
            .enumerate()
            .all(|(i, block)| !blocks[..i].contains(block));
    let place = |i: usize, line: usize| match (distinct, blocks[i]) {
        (true, Some(block)) => format!("{line} (in `{}`)", snippet(block, SNIPPET_CHARS)),
        _ => line.to_string(),
    };
    for (i, &line) in lines.iter().enumerate().take(LISTED_MATCHES) {
        reply.push_str(&format!(
            "  {}: {}\n",
            place(i, line),
            snippet(line_text(content, line), SNIPPET_CHARS)
        ));
    }
    let unique: Vec<(String, String)> = lines
        .iter()
        .enumerate()
        .take(UNIQUE_SHOWN)
        .filter_map(|(i, &line)| {
            unique_block(content, line, old).map(|block| (place(i, line), block))
        })
        .collect();
    if unique.is_empty() {
        reply.push_str(
            "Include more surrounding lines in old_string so that it matches exactly one place.",
        );
        return reply;
    }
    reply.push_str("Include more surrounding lines in old_string so that it matches exactly one place. These occur only once (copy one as old_string, and the same lines with your change as new_string):\n");
    for (line, block) in unique {
        reply.push_str(&format!("  line {line}: {}\n", json_string(&block)));
    }
    reply.trim_end().to_string()
}

/// The header of the block that holds line `line` (1-based) of `lines`: the nearest
/// line above it with less indentation that opens a block (ends with `:`, `{` or `(`,
/// as `class Http:`), or for a line without indentation the nearest `[section]` above
/// it; `None` when there is none.
fn enclosing<'a>(lines: &[&'a str], line: usize) -> Option<&'a str> {
    enclosing_line(lines, line).map(|opener| lines[opener - 1].trim())
}

/// The line number (1-based) of [`enclosing`]'s header.
fn enclosing_line(lines: &[&str], line: usize) -> Option<usize> {
    let at = line.checked_sub(1).filter(|&at| at < lines.len())?;
    let indent = |text: &str| text.len() - text.trim_start().len();
    let own = indent(lines[at]);
    for (index, text) in lines[..at].iter().enumerate().rev() {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        if own == 0 {
            if trimmed.starts_with('[') && trimmed.ends_with(']') {
                return Some(index + 1);
            }
            continue;
        }
        if indent(text) < own {
            return trimmed.ends_with([':', '{', '(']).then_some(index + 1);
        }
    }
    None
}

/// Block levels named in a line's path.
const PATH_LEVELS: usize = 2;

/// The names of the blocks around line `line`, outermost first, at most
/// [`PATH_LEVELS`] (`"api" > "dependencies"` for a JSON line, `class Http > def get`),
/// each header without its opening `{`, `:` or `(`; `None` when no header names one.
fn block_path(lines: &[&str], line: usize) -> Option<String> {
    let mut names = Vec::new();
    let mut at = line;
    while let Some(opener) = enclosing_line(lines, at) {
        let name = lines[opener - 1]
            .trim()
            .trim_end_matches(['{', '(', '['])
            .trim_end()
            .trim_end_matches(':')
            .trim();
        if !name.is_empty() && names.len() < PATH_LEVELS {
            names.push(snippet(name, SNIPPET_CHARS / 2));
        }
        at = opener;
    }
    names.reverse();
    (!names.is_empty()).then(|| names.join(" > "))
}

/// The fewest whole lines around line `line` (1-based), at most [`CONTEXT_LINES`]
/// more above or below, that hold `old` and occur once in `content`.
fn unique_block(content: &str, line: usize, old: &str) -> Option<String> {
    if old.contains('\n') {
        return None;
    }
    let lines: Vec<&str> = content.lines().collect();
    let at = line.checked_sub(1).filter(|&at| at < lines.len())?;
    for extra in 1..=CONTEXT_LINES {
        let above = at.saturating_sub(extra);
        let below = (at + extra).min(lines.len() - 1);
        for (first, last) in [(above, at), (at, below), (above, below)] {
            let block = lines[first..=last].join("\n");
            if block.contains(old) && occurs_once(content, &block) {
                return Some(block);
            }
        }
    }
    None
}

/// The reply when `old_string` does not occur: a match ignoring case, a match
/// ignoring whitespace (and what differs), or the lines most like its first line.
pub(crate) fn not_found_reply(content: &str, old: &str, shown: &str) -> String {
    if content.is_empty() {
        return format!(
            "`{shown}` is empty, so old_string cannot be in it; use write_file to give it content."
        );
    }
    let advice = "Re-read those lines with read_file and copy the text exactly into old_string.";
    if let Some(line) = case_insensitive_match(content, old) {
        return format!(
            "old_string was not found in `{shown}`, but it matches ignoring case at line {line}: `{}`. {advice}",
            snippet(line_text(content, line), SNIPPET_CHARS)
        );
    }
    if let Some((first, last, difference)) = whitespace_insensitive_match(content, old) {
        let range = if first == last {
            format!("line {first}")
        } else {
            format!("lines {first}-{last}")
        };
        return format!(
            "old_string was not found in `{shown}`, but it matches {range} if whitespace is ignored: {difference}. {advice}"
        );
    }
    let nearest = nearest_lines(content, old);
    if nearest.is_empty() {
        return format!("old_string was not found in `{shown}`, and no line resembles it. Read the file with read_file first.");
    }
    let mut reply =
        format!("old_string was not found in `{shown}`. The lines most like its first line are:\n");
    // Alike lines in different blocks (`"chart-lib"` under `"web"` and under `"api"`)
    // say which block holds each: a task names the block, not the line.
    let lines: Vec<&str> = content.lines().collect();
    let paths: Vec<Option<String>> = nearest.iter().map(|&l| block_path(&lines, l)).collect();
    let named: Vec<&String> = paths.iter().flatten().collect();
    let differ = named
        .iter()
        .enumerate()
        .any(|(i, p)| named[..i].iter().any(|q| q != p));
    for (line, path) in nearest.iter().zip(&paths) {
        let place = match (differ, path) {
            (true, Some(path)) => format!("{line} (in {path})"),
            _ => line.to_string(),
        };
        reply.push_str(&format!(
            "  {place}: {}\n",
            snippet(line_text(content, *line), SNIPPET_CHARS)
        ));
    }
    reply.push_str(advice);
    reply
}

/// Whether `needle` occurs exactly once in `haystack`, overlapping occurrences counted.
fn occurs_once(haystack: &str, needle: &str) -> bool {
    let Some(first) = haystack.find(needle) else {
        return false;
    };
    let next = first + haystack[first..].chars().next().map_or(1, char::len_utf8);
    !haystack[next..].contains(needle)
}

fn line_text(content: &str, line: usize) -> &str {
    content.lines().nth(line.saturating_sub(1)).unwrap_or("")
}

fn case_insensitive_match(content: &str, old: &str) -> Option<usize> {
    let lowered = content.to_lowercase();
    lowered
        .find(&old.to_lowercase())
        .map(|start| line_number_at(&lowered, start))
}

fn collapse_whitespace(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first and last line of a window of `content` whose lines equal those of
/// `old` with whitespace collapsed, and what differs.
fn whitespace_insensitive_match(content: &str, old: &str) -> Option<(usize, usize, String)> {
    let wanted: Vec<String> = old.lines().map(collapse_whitespace).collect();
    let first_wanted = wanted.iter().position(|line| !line.is_empty())?;
    let last_wanted = wanted.iter().rposition(|line| !line.is_empty())?;
    let wanted = &wanted[first_wanted..=last_wanted];
    let raw_wanted: Vec<&str> = old.lines().skip(first_wanted).take(wanted.len()).collect();
    let lines: Vec<&str> = content.lines().collect();
    let normalized: Vec<String> = lines.iter().map(|line| collapse_whitespace(line)).collect();
    let start = normalized
        .windows(wanted.len())
        .position(|window| window == wanted)?;
    let found = &lines[start..start + wanted.len()];
    let difference = describe_difference(content, old, found, &raw_wanted);
    Some((start + 1, start + wanted.len(), difference))
}

fn describe_difference(content: &str, old: &str, found: &[&str], wanted: &[&str]) -> String {
    if content.contains("\r\n") && !old.contains("\r\n") {
        return "the file has Windows line endings (CRLF)".to_string();
    }
    for (file_line, old_line) in found.iter().zip(wanted) {
        if file_line == old_line {
            continue;
        }
        let indent = |line: &str| line.len() - line.trim_start().len();
        let file_indent = &file_line[..indent(file_line)];
        let old_indent = &old_line[..indent(old_line)];
        if file_indent.contains('\t') != old_indent.contains('\t') {
            let uses = if file_indent.contains('\t') {
                "tabs"
            } else {
                "spaces"
            };
            return format!(
                "the file indents with {uses} (`{}`)",
                snippet(file_line, SNIPPET_CHARS)
            );
        }
        if file_line.trim_end() == old_line.trim_end() {
            return format!(
                "trailing whitespace differs on `{}`",
                snippet(file_line, SNIPPET_CHARS)
            );
        }
        if file_indent != old_indent {
            return format!(
                "the indentation differs (the file has {} leading characters on `{}`)",
                file_indent.chars().count(),
                snippet(file_line, SNIPPET_CHARS)
            );
        }
        return format!(
            "spacing inside the line differs on `{}`",
            snippet(file_line, SNIPPET_CHARS)
        );
    }
    "only blank lines or line endings differ".to_string()
}

/// Line numbers of the lines most like the first non-blank line of `old`.
fn nearest_lines(content: &str, old: &str) -> Vec<usize> {
    let Some(first) = old.lines().map(str::trim).find(|line| !line.is_empty()) else {
        return Vec::new();
    };
    let mut scored: Vec<(f64, usize)> = content
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            (
                strsim::normalized_levenshtein(first, line.trim()),
                index + 1,
            )
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    scored.sort_by(|(a, a_line), (b, b_line)| b.total_cmp(a).then(a_line.cmp(b_line)));
    scored
        .into_iter()
        .take(NEAREST_LINES)
        .map(|(_, line)| line)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alike_lines_in_different_blocks_say_which_block_holds_each() {
        let deps = "{\n  \"packages\": {\n    \"web\": {\n      \"dependencies\": {\n        \"chart-lib\": { \"version\": \"3.2.1\" },\n        \"ui-kit\": { \"version\": \"0.19.4\" }\n      }\n    },\n    \"api\": {\n      \"dependencies\": {\n        \"chart-lib\": { \"version\": \"2.9.0\" }\n      }\n    }\n  }\n}\n";
        let reply = not_found_reply(deps, "api:chart-lib:2.9.0", "deps.json");
        assert!(
            reply.contains(
                "  11 (in \"api\" > \"dependencies\"): \"chart-lib\": { \"version\": \"2.9.0\" }"
            ),
            "{reply}"
        );
        assert!(
            reply.contains("  5 (in \"web\" > \"dependencies\"): \"chart-lib\""),
            "{reply}"
        );
        // Lines of one block alone keep their bare numbers.
        let flat = "alpha = 1\nalpha = 2\n";
        let reply = not_found_reply(flat, "alpha = 3", "a.toml");
        assert!(reply.contains("  1: alpha = 1"), "{reply}");
    }

    #[test]
    fn several_matches_are_listed_with_lines() {
        let content = "let a = 1;\nfoo();\nlet b = 2;\nfoo();\n";
        let starts: Vec<usize> = content
            .match_indices("foo")
            .map(|(start, _)| start)
            .collect();
        let reply = ambiguity_reply(content, &starts, "foo", "x.rs");
        assert!(
            reply.starts_with("old_string occurs 2 times in `x.rs` (lines 2, 4):"),
            "{reply}"
        );
        assert!(reply.contains("  4: foo();"), "{reply}");
        assert!(reply.contains("Include more surrounding lines"), "{reply}");
        // Each place with the fewest lines that make it unique, as JSON strings.
        assert!(
            reply.contains("  line 2: \"let a = 1;\\nfoo();\"\n  line 4: \"let b = 2;\\nfoo();\""),
            "{reply}"
        );
    }

    #[test]
    fn places_in_different_blocks_name_their_block() {
        let content = "class Database:\n    host = \"db.internal\"\n    timeout = 10\n\n\nclass Http:\n    base_url = \"https://api.example.com\"\n    timeout = 10\n";
        let starts: Vec<usize> = content
            .match_indices("timeout = 10")
            .map(|(start, _)| start)
            .collect();
        let reply = ambiguity_reply(content, &starts, "timeout = 10", "settings.py");
        assert!(
            reply.contains(
                "  3 (in `class Database:`): timeout = 10\n  8 (in `class Http:`): timeout = 10"
            ),
            "{reply}"
        );
        assert!(
            reply.contains("  line 8 (in `class Http:`): \"    base_url"),
            "{reply}"
        );
        // Sections of an INI or TOML file.
        let toml = "[server]\nport = 80\n\n[proxy]\nport = 80\n";
        let starts: Vec<usize> = toml.match_indices("port = 80").map(|(s, _)| s).collect();
        let reply = ambiguity_reply(toml, &starts, "port = 80", "a.toml");
        assert!(
            reply.contains("  2 (in `[server]`): port = 80\n  5 (in `[proxy]`): port = 80"),
            "{reply}"
        );
        // The same block for both, or none: no block is named.
        let same = "fn main() {\n    f();\n    f();\n}\n";
        let starts: Vec<usize> = same.match_indices("f()").map(|(s, _)| s).collect();
        let reply = ambiguity_reply(same, &starts, "f()", "m.rs");
        assert!(reply.contains("  2: f();\n  3: f();"), "{reply}");
        assert_eq!(enclosing(&["a", "b"], 2), None);
    }

    #[test]
    fn a_unique_block_may_need_lines_below_or_none_is_found() {
        let content = "x = 1\ntimeout = 10\nclass A\nx = 1\ntimeout = 10\nclass B\n";
        assert_eq!(
            unique_block(content, 2, "timeout = 10").as_deref(),
            Some("timeout = 10\nclass A")
        );
        let same = "b\n".repeat(9);
        assert_eq!(unique_block(&same, 5, "b"), None);
        assert_eq!(unique_block(content, 2, "x\ny"), None);
    }

    #[test]
    fn a_case_difference_is_located() {
        let reply = not_found_reply("one\nHello World\n", "hello world", "a.txt");
        assert!(
            reply.contains("matches ignoring case at line 2: `Hello World`"),
            "{reply}"
        );
    }

    #[test]
    fn tabs_against_spaces_are_named() {
        let reply = not_found_reply("fn a() {\n\tx();\n}\n", "fn a() {\n    x();\n}", "a.rs");
        assert!(
            reply.contains("matches lines 1-3 if whitespace is ignored"),
            "{reply}"
        );
        assert!(reply.contains("indents with tabs"), "{reply}");
    }

    #[test]
    fn trailing_spaces_are_named() {
        let reply = not_found_reply("a = 1   \nb = 2\n", "a = 1\nb = 2", "a.py");
        assert!(reply.contains("trailing whitespace differs"), "{reply}");
    }

    #[test]
    fn otherwise_the_nearest_lines_are_offered() {
        let content = "fn alpha() {}\nfn beta(x: u32) {}\nstruct Gamma;\n";
        let reply = not_found_reply(content, "fn beta(x: u64) {}", "a.rs");
        assert!(
            reply.contains("The lines most like its first line are:\n  2: fn beta(x: u32) {}"),
            "{reply}"
        );
        assert!(not_found_reply("", "x", "e.txt").contains("is empty"));
    }
}
