//! A `write_file` whose content is `search` output for the very file it replaces
//! (`docs/guide.md:3: To recieve updates…`): a small model copies the result it has
//! instead of writing the file's text, and the file's other lines are lost. Such a
//! write is refused with the `edit_file` call that changes the line instead.

use serde_json::json;

use crate::text::plural;

/// The refusal for writing `content` over `previous` at `shown`, when every line of
/// `content` is a `shown:N: text` line for a line `N` the file has, or the search
/// reply's own framing around such lines (`2 matching lines in 1 file:`, "`x` as
/// written matches nothing"), and the file itself holds no such line; `None`
/// otherwise.
pub(crate) fn search_copy_refusal(shown: &str, previous: &str, content: &str) -> Option<String> {
    let prefix = format!("{shown}:");
    let old_lines: Vec<&str> = previous.lines().collect();
    if old_lines.iter().any(|l| l.starts_with(&prefix)) {
        return None;
    }
    let mut copied = Vec::new();
    for line in content.lines().filter(|l| !l.trim().is_empty()) {
        if is_search_framing(line) {
            continue;
        }
        let rest = line.strip_prefix(&prefix)?;
        let (number, text) = rest.split_once(':')?;
        let number: usize = number.trim().parse().ok()?;
        let old = old_lines.get(number.checked_sub(1)?)?;
        copied.push((number, text.strip_prefix(' ').unwrap_or(text), *old));
    }
    let (number, text, old) = *copied.first()?;
    let call = json!({"path": shown, "old_string": old, "new_string": text});
    Some(format!(
        "Not written: this content is `search` output for `{shown}` itself (`{shown}:{number}: …`), so it would replace the file's {} with a copy of the search result. If the task asks for a change to this file, change line {number} with edit_file, for example {call} with `new_string` corrected, or give the file's full new text without the `path:line:` prefixes; if it does not, leave the file as it is.",
        plural(old_lines.len(), "line")
    ))
}

/// A line `search` writes around its hits: the count that heads them (after the
/// probe that found them, if any) or the note that the pattern as written matched
/// nothing.
fn is_search_framing(line: &str) -> bool {
    let line = line.trim();
    let heads_hits = line.ends_with(':')
        && line.rsplit_once(" matching ").is_some_and(|(count, rest)| {
            count
                .rsplit(' ')
                .next()
                .is_some_and(|n| n.parse::<usize>().is_ok())
                && (rest.starts_with("line") || rest.starts_with("file"))
        });
    heads_hits || (line.starts_with("(`") && line.contains("` as written matches nothing in"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "# Guide\n\nTo recieve updates, subscribe to the channel.\n";

    #[test]
    fn a_copy_of_search_lines_for_the_same_file_is_refused_with_the_edit() {
        let note = search_copy_refusal(
            "docs/guide.md",
            GUIDE,
            "docs/guide.md:3: To recieve updates, subscribe to the channel.\n",
        )
        .unwrap();
        assert!(note.contains("edit_file"), "{note}");
        assert!(
            note.contains(r#""old_string":"To recieve updates, subscribe to the channel.""#),
            "{note}"
        );
        assert!(note.contains("3 lines"), "{note}");
    }

    #[test]
    fn a_copy_with_the_search_replys_framing_is_refused_too() {
        let content = "As the word `recieve` alone (any case): 1 matching line in 1 file:\n\ndocs/guide.md:3: To recieve updates, subscribe to the channel.\n(`to recieve` as written matches nothing in `.`.)\n";
        assert!(search_copy_refusal("docs/guide.md", GUIDE, content).is_some());
        let plain = "1 matching line in 1 file:\ndocs/guide.md:3: To recieve updates, subscribe to the channel.\n";
        assert!(search_copy_refusal("docs/guide.md", GUIDE, plain).is_some());
        // Framing alone is not a copy of this file's lines.
        assert_eq!(
            search_copy_refusal("docs/guide.md", GUIDE, "1 matching line in 1 file:\n"),
            None
        );
    }

    #[test]
    fn other_content_is_written() {
        for content in [
            "# Guide\n\nTo receive updates, subscribe to the channel.\n",
            // A list of places in other files (the TODO demo's output).
            "src/main.py:3: TODO: parse args\n",
            // A line number the file does not have.
            "docs/guide.md:9: x\n",
            // Mixed with ordinary text.
            "docs/guide.md:3: x\nmore text\n",
        ] {
            assert_eq!(
                search_copy_refusal("docs/guide.md", GUIDE, content),
                None,
                "{content}"
            );
        }
        // A file that is itself a list of such lines may be rewritten.
        let list = "docs/guide.md:1: a\n";
        assert_eq!(search_copy_refusal("docs/guide.md", list, list), None);
    }
}
