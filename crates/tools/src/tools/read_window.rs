//! Choosing which part of a text file to show under a line budget and a character
//! budget, while counting the file's lines.

use std::io::{self, BufRead};

use crate::text::{prefix_chars, skip_chars};

/// What part of the file to show.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowRequest {
    /// First line, 1-based.
    pub offset: usize,
    /// Characters of the first line to skip.
    pub char_offset: usize,
    /// Lines to show at most.
    pub limit: usize,
    /// Characters to show at most.
    pub char_budget: usize,
}

/// A line cut by the character budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineCut {
    /// The line, 1-based.
    pub line: usize,
    /// The character to continue from.
    pub resume_at: usize,
    /// The line's length in characters.
    pub line_chars: usize,
}

/// The lines to show, numbered, and the file's line count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    /// Line number and text (without the line ending).
    pub lines: Vec<(usize, String)>,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// Where the last shown line was cut, if it was.
    pub cut: Option<LineCut>,
}

/// Why no window could be shown.
#[derive(Debug)]
pub(crate) enum WindowError {
    /// The offset lies past the last line.
    OffsetPastEnd {
        /// Lines in the file.
        total_lines: usize,
    },
    /// The character offset lies past the end of the first line.
    CharOffsetPastEnd {
        /// The line's length in characters.
        line_chars: usize,
    },
    /// Reading failed.
    Io(io::Error),
}

/// Reads the whole of `reader`, keeping the lines `request` asks for.
pub(crate) fn read_window(
    mut reader: impl BufRead,
    request: WindowRequest,
) -> Result<Window, WindowError> {
    let mut lines = Vec::new();
    let mut cut = None;
    let mut used_chars = 0;
    let mut collecting = true;
    let mut line_number = 0;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        if reader
            .read_until(b'\n', &mut buffer)
            .map_err(WindowError::Io)?
            == 0
        {
            break;
        }
        line_number += 1;
        if !collecting || line_number < request.offset {
            continue;
        }
        if lines.len() >= request.limit {
            collecting = false;
            continue;
        }
        let decoded = String::from_utf8_lossy(&buffer);
        let full_line = decoded.trim_end_matches('\n').trim_end_matches('\r');
        let skipped = if line_number == request.offset {
            request.char_offset
        } else {
            0
        };
        let line_chars = full_line.chars().count();
        if skipped > 0 && skipped >= line_chars {
            return Err(WindowError::CharOffsetPastEnd { line_chars });
        }
        let rest = skip_chars(full_line, skipped);
        let rest_chars = line_chars - skipped;
        let room = request.char_budget.saturating_sub(used_chars);
        if rest_chars <= room {
            used_chars += rest_chars;
            lines.push((line_number, rest.to_string()));
        } else {
            if lines.is_empty() {
                let shown_chars = room.max(1);
                lines.push((line_number, prefix_chars(rest, shown_chars).to_string()));
                cut = Some(LineCut {
                    line: line_number,
                    resume_at: skipped + shown_chars,
                    line_chars,
                });
            }
            collecting = false;
        }
    }
    if lines.is_empty() {
        return Err(WindowError::OffsetPastEnd {
            total_lines: line_number,
        });
    }
    Ok(Window {
        lines,
        total_lines: line_number,
        cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        offset: usize,
        char_offset: usize,
        limit: usize,
        char_budget: usize,
    ) -> WindowRequest {
        WindowRequest {
            offset,
            char_offset,
            limit,
            char_budget,
        }
    }

    fn numbers(window: &Window) -> Vec<usize> {
        window.lines.iter().map(|(number, _)| *number).collect()
    }

    #[test]
    fn the_line_budget_limits_the_window_and_all_lines_are_counted() {
        let text = "a\nb\nc\nd\ne\n";
        let window = read_window(text.as_bytes(), request(2, 0, 2, 100)).unwrap();
        assert_eq!(numbers(&window), [2, 3]);
        assert_eq!(window.total_lines, 5);
        assert_eq!(window.cut, None);
    }

    #[test]
    fn the_character_budget_stops_before_a_line_that_does_not_fit() {
        let text = "aaaa\nbbbb\ncccc\n";
        let window = read_window(text.as_bytes(), request(1, 0, 10, 9)).unwrap();
        assert_eq!(numbers(&window), [1, 2]);
        assert_eq!(window.cut, None);
    }

    #[test]
    fn a_single_long_line_is_cut_and_resumed_at_a_character() {
        let text = "ééééééééé\nnext";
        let first = read_window(text.as_bytes(), request(1, 0, 10, 4)).unwrap();
        assert_eq!(first.lines, [(1, "éééé".to_string())]);
        let cut = first.cut.unwrap();
        assert_eq!((cut.line, cut.resume_at, cut.line_chars), (1, 4, 9));
        let second = read_window(text.as_bytes(), request(1, 4, 10, 100)).unwrap();
        assert_eq!(
            second.lines,
            [(1, "ééééé".to_string()), (2, "next".to_string())]
        );
    }

    #[test]
    fn offsets_past_the_end_are_errors() {
        let past_lines = read_window("a\nb".as_bytes(), request(5, 0, 10, 100));
        assert!(matches!(
            past_lines,
            Err(WindowError::OffsetPastEnd { total_lines: 2 })
        ));
        let past_chars = read_window("abc".as_bytes(), request(1, 3, 10, 100));
        assert!(matches!(
            past_chars,
            Err(WindowError::CharOffsetPastEnd { line_chars: 3 })
        ));
    }

    #[test]
    fn crlf_endings_are_not_shown() {
        let window = read_window("a\r\nb\r\n".as_bytes(), request(1, 0, 10, 100)).unwrap();
        assert_eq!(window.lines, [(1, "a".to_string()), (2, "b".to_string())]);
    }
}
