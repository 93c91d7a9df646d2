//! What a server wrote on its standard error: kept for the trace (never shown on the
//! terminal), bounded in lines and line length.

use std::collections::VecDeque;

/// Lines kept until they are taken.
pub const MAX_LINES: usize = 200;

/// Characters kept of one line.
pub const MAX_LINE_CHARS: usize = 500;

/// A server's recent standard-error lines.
#[derive(Debug, Default)]
pub struct ServerLog {
    lines: VecDeque<String>,
    dropped: usize,
    last: Option<String>,
}

impl ServerLog {
    /// Keeps `line`, cut to [`MAX_LINE_CHARS`]; the oldest kept line goes when
    /// [`MAX_LINES`] are kept.
    pub fn push(&mut self, line: String) {
        let line: String = line.trim_end().chars().take(MAX_LINE_CHARS).collect();
        if line.trim().is_empty() {
            return;
        }
        if self.lines.len() == MAX_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.last = Some(line.clone());
        self.lines.push_back(line);
    }

    /// The kept lines, oldest first, with how many were dropped before them; the
    /// log is empty afterwards.
    pub fn take(&mut self) -> (Vec<String>, usize) {
        let dropped = std::mem::take(&mut self.dropped);
        (self.lines.drain(..).collect(), dropped)
    }

    /// The latest line written, taken or not.
    pub fn last(&self) -> Option<&str> {
        self.last.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_bounded_and_remembers_its_last_line() {
        let mut log = ServerLog::default();
        for index in 0..(MAX_LINES + 5) {
            log.push(format!("line {index}"));
        }
        log.push("   ".into());
        log.push("x".repeat(MAX_LINE_CHARS + 10));
        let (lines, dropped) = log.take();
        assert_eq!(lines.len(), MAX_LINES);
        assert_eq!(dropped, 6);
        assert_eq!(lines[0], "line 6");
        assert_eq!(lines.last().map(String::len), Some(MAX_LINE_CHARS));
        assert_eq!(log.last().map(str::len), Some(MAX_LINE_CHARS));
        assert_eq!(log.take(), (Vec::new(), 0));
    }
}
