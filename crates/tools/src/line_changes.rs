//! What a whole-file write did to the lines a file had: a line diff summed up in one
//! sentence, so a write that drops most of a file says so in its result.

use similar::{ChangeTag, TextDiff};

use crate::text::snippet;

/// Removed lines quoted at most.
const QUOTED: usize = 3;
/// Characters of a quoted line.
const QUOTE_CHARS: usize = 60;

/// How the lines of `old` fared in `new`, or `None` when no line of `old` is gone:
/// "3 of its 4 lines are gone (among them `def main():`, `run()`); 1 line added."
pub(crate) fn removed_lines_summary(old: &str, new: &str) -> Option<String> {
    let diff = TextDiff::from_lines(old, new);
    let (mut removed, mut added) = (Vec::new(), 0usize);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Delete => removed.push(change.value().trim_end().to_string()),
            ChangeTag::Insert => added += 1,
            ChangeTag::Equal => {}
        }
    }
    if removed.is_empty() {
        return None;
    }
    let had = old.lines().count().max(removed.len());
    let quoted: Vec<String> = removed
        .iter()
        .filter(|line| !line.trim().is_empty())
        .take(QUOTED)
        .map(|line| format!("`{}`", snippet(line, QUOTE_CHARS)))
        .collect();
    let among = if quoted.is_empty() {
        String::new()
    } else if quoted.len() == removed.len() {
        format!(" ({})", quoted.join(", "))
    } else {
        format!(" (among them {})", quoted.join(", "))
    };
    let of = if had == 1 {
        "its only line is gone".to_string()
    } else if removed.len() == had {
        format!("all {had} of its lines are gone")
    } else {
        format!(
            "{} of its {had} lines {} gone",
            removed.len(),
            if removed.len() == 1 { "is" } else { "are" }
        )
    };
    let added = match added {
        0 => "no line added".to_string(),
        1 => "1 line added".to_string(),
        n => format!("{n} lines added"),
    };
    Some(format!("{of}{among}; {added}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_keeps_one_line_of_four_says_which_are_gone() {
        let old = "import sys\n\ndef main():\n    run(sys.argv)\n";
        let new = "    run(sys.argv[1:])\n";
        assert_eq!(
            removed_lines_summary(old, new).unwrap(),
            "all 4 of its lines are gone (among them `import sys`, `def main():`, `run(sys.argv)`); 1 line added"
        );
    }

    #[test]
    fn a_changed_line_counts_once_and_pure_additions_say_nothing() {
        let old = "a = 1\nb = 2\nc = 3\n";
        assert_eq!(
            removed_lines_summary(old, "a = 1\nb = 5\nc = 3\n").unwrap(),
            "1 of its 3 lines is gone (`b = 2`); 1 line added"
        );
        assert_eq!(
            removed_lines_summary(old, "a = 1\nb = 2\nc = 3\nd = 4\n"),
            None
        );
    }
}
