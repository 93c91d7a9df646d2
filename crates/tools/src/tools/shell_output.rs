//! Bounding shell output: the head and the tail are kept, the middle is replaced by
//! a marker (with the omitted lines that report a failure or an error), and the full
//! output is saved to a file the model can read or search.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::text::{count_lines, plural};

/// Output as shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bounded {
    /// The head, the marker and the tail (or everything when it fit).
    pub text: String,
    /// Whether anything was left out.
    pub cut: bool,
}

/// `output` cut to about `max_chars` characters: about half from the start and half
/// from the end, at line boundaries where lines are short enough, with
/// `[... N lines / M chars omitted ...]` between.
pub(crate) fn bound_output(output: &str, max_chars: usize) -> Bounded {
    let total_chars = output.chars().count();
    if total_chars <= max_chars {
        return Bounded {
            text: output.to_string(),
            cut: false,
        };
    }
    let half = max_chars / 2;
    let head_end = head_end(output, half);
    let tail_start = tail_start(output, half).max(head_end);
    let omitted = &output[head_end..tail_start];
    let head = &output[..head_end];
    let separator = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let notable = notable_lines(omitted, count_lines(head));
    let text = format!(
        "{head}{separator}[... {} / {} chars omitted ...]\n{notable}{}",
        plural(count_lines(omitted), "line"),
        omitted.chars().count(),
        &output[tail_start..]
    );
    Bounded { text, cut: true }
}

/// The omitted lines that report a failure or an error (a failed test in the middle
/// of a long run), at most [`NOTABLE_MAX`] of them, each numbered as a line of the
/// whole output (`first_line` lines come before `omitted`); empty when there are none.
fn notable_lines(omitted: &str, first_line: usize) -> String {
    let Ok(pattern) = regex::Regex::new(
        r"(?i)\b(fail|failed|failure|failures|error|errors|panic|panicked|traceback|exception|fatal)\b",
    ) else {
        return String::new();
    };
    let found: Vec<(usize, &str)> = omitted
        .lines()
        .enumerate()
        .filter(|(_, line)| pattern.is_match(line))
        .collect();
    if found.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "[of those, {} reporting a failure or an error (line: text):]\n",
        plural(found.len(), "line")
    );
    for (index, line) in found.iter().take(NOTABLE_MAX) {
        text.push_str(&format!(
            "{}: {}\n",
            first_line + index + 1,
            crate::text::snippet(line, NOTABLE_CHARS)
        ));
    }
    if found.len() > NOTABLE_MAX {
        text.push_str(&format!(
            "[{} more not shown; search the full output for them]\n",
            found.len() - NOTABLE_MAX
        ));
    }
    text.push_str("[end of the omitted part]\n");
    text
}

/// Omitted lines shown at most for reporting a failure or an error.
const NOTABLE_MAX: usize = 12;
/// Characters shown at most of each such line.
const NOTABLE_CHARS: usize = 200;

/// The byte index where the head ends: whole lines up to `budget` characters, or a
/// cut inside the first line when it alone is longer.
fn head_end(output: &str, budget: usize) -> usize {
    let mut end = 0;
    let mut used = 0;
    for line in output.split_inclusive('\n') {
        let chars = line.chars().count();
        if used + chars > budget {
            break;
        }
        used += chars;
        end += line.len();
    }
    if end == 0 {
        return output
            .char_indices()
            .nth(budget)
            .map_or(output.len(), |(index, _)| index);
    }
    end
}

/// The byte index where the tail starts: whole lines up to `budget` characters from
/// the end, or a cut inside the last line when it alone is longer.
fn tail_start(output: &str, budget: usize) -> usize {
    let mut start = output.len();
    let mut used = 0;
    for line in output.split_inclusive('\n').rev() {
        let chars = line.chars().count();
        if used + chars > budget {
            break;
        }
        used += chars;
        start -= line.len();
    }
    if start == output.len() {
        let skip = output.chars().count().saturating_sub(budget);
        return output
            .char_indices()
            .nth(skip)
            .map_or(output.len(), |(index, _)| index);
    }
    start
}

/// Saves `output` as `shell-N.txt` in `directory` (created if missing), with `N`
/// after `*counter` and not used by an existing file; updates the counter.
pub(crate) fn save_output(
    directory: &Path,
    counter: &mut u64,
    output: &[u8],
) -> io::Result<PathBuf> {
    fs::create_dir_all(directory)?;
    let mut temporary = tempfile::NamedTempFile::new_in(directory)?;
    temporary.write_all(output)?;
    loop {
        *counter += 1;
        let path = directory.join(format!("shell-{counter}.txt"));
        match temporary.persist_noclobber(&path) {
            Ok(_) => return Ok(path),
            Err(error) if error.error.kind() == io::ErrorKind::AlreadyExists => {
                temporary = error.file
            }
            Err(error) => return Err(error.error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        assert_eq!(
            bound_output("a\nb\n", 10),
            Bounded {
                text: "a\nb\n".to_string(),
                cut: false
            }
        );
    }

    #[test]
    fn long_output_keeps_head_and_tail_lines_with_a_marker() {
        let output: String = (1..=100)
            .map(|number| format!("line {number:03}\n"))
            .collect();
        let bounded = bound_output(&output, 40);
        assert!(bounded.cut);
        assert!(
            bounded
                .text
                .starts_with("line 001\nline 002\n[... 96 lines / 864 chars omitted ...]\n"),
            "{}",
            bounded.text
        );
        assert!(
            bounded.text.ends_with("line 099\nline 100\n"),
            "{}",
            bounded.text
        );
    }

    #[test]
    fn omitted_lines_that_report_failures_are_kept() {
        let mut output = String::new();
        for number in 1..=3000 {
            output.push_str(&format!("test_case_{number} ... ok\n"));
            if number == 1700 {
                output.push_str("test_refund_rounding ... FAILED (expected 10.05, got 10.04)\n");
            }
        }
        output.push_str("3001 tests, 1 failure\n");
        let bounded = bound_output(&output, 2000);
        assert!(
            bounded.text.contains(
                "[of those, 1 line reporting a failure or an error (line: text):]\n1701: test_refund_rounding ... FAILED (expected 10.05, got 10.04)\n[end of the omitted part]\n"
            ),
            "{}",
            bounded.text
        );
        assert!(bounded.text.ends_with("3001 tests, 1 failure\n"));
        let line_1701 = output.lines().nth(1700).unwrap();
        assert!(line_1701.starts_with("test_refund_rounding"));
        // Nothing notable, nothing added; words inside others do not count.
        let plain: String = (1..=500).map(|n| format!("terror_free {n}\n")).collect();
        assert!(!bound_output(&plain, 200).text.contains("reporting"));
        // Many are capped.
        let noisy: String = (1..=500).map(|n| format!("error {n}\n")).collect();
        let text = bound_output(&noisy, 200).text;
        assert!(
            text.contains("more not shown; search the full output"),
            "{text}"
        );
        assert_eq!(text.matches(": error ").count(), 12, "{text}");
    }

    #[test]
    fn one_huge_line_is_cut_at_character_boundaries() {
        let output = "é".repeat(1000);
        let bounded = bound_output(&output, 100);
        assert!(
            bounded.text.starts_with(&"é".repeat(50)),
            "{}",
            bounded.text
        );
        assert!(
            bounded
                .text
                .contains("[... 1 line / 900 chars omitted ...]"),
            "{}",
            bounded.text
        );
        assert!(bounded.text.ends_with(&"é".repeat(50)));
    }

    #[test]
    fn saved_outputs_get_fresh_names() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = dir.path().join("outputs");
        fs::create_dir(&outputs).unwrap();
        fs::write(outputs.join("shell-1.txt"), "older run").unwrap();
        let mut counter = 0;
        let first = save_output(&outputs, &mut counter, b"one").unwrap();
        let second = save_output(&outputs, &mut counter, b"two").unwrap();
        assert_eq!(first, outputs.join("shell-2.txt"));
        assert_eq!(second, outputs.join("shell-3.txt"));
        assert_eq!(fs::read_to_string(&second).unwrap(), "two");
        assert_eq!(
            fs::read_to_string(outputs.join("shell-1.txt")).unwrap(),
            "older run"
        );
    }
}
