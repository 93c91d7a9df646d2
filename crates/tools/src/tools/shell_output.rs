//! Bounding shell output: the head and the tail are kept, the middle is replaced by
//! a marker, and the full output is saved to a file the model can read or search.

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
    let text = format!(
        "{head}{separator}[... {} / {} chars omitted ...]\n{}",
        plural(count_lines(omitted), "line"),
        omitted.chars().count(),
        &output[tail_start..]
    );
    Bounded { text, cut: true }
}

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
