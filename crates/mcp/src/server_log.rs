//! What a server wrote on its standard error: kept for the trace (never shown on the
//! terminal), bounded in lines and line length.

use std::collections::VecDeque;

/// Lines kept until they are taken.
pub const MAX_LINES: usize = 200;

/// Characters kept of one line.
pub const MAX_LINE_CHARS: usize = 500;

/// The latest lines looked at for a server's last words.
const LAST_WORDS_WINDOW: usize = 10;

/// A server's recent standard-error lines.
#[derive(Debug, Default)]
pub struct ServerLog {
    lines: VecDeque<String>,
    dropped: usize,
    /// The latest lines, taken or not.
    recent: VecDeque<String>,
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
        if self.recent.len() == LAST_WORDS_WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(line.clone());
        self.lines.push_back(line);
    }

    /// The kept lines, oldest first, with how many were dropped before them; the
    /// log is empty afterwards.
    pub fn take(&mut self) -> (Vec<String>, usize) {
        let dropped = std::mem::take(&mut self.dropped);
        (self.lines.drain(..).collect(), dropped)
    }

    /// What explains a failure best: the latest of the last few lines that names an
    /// error (Node, for one, ends a crash with its version line after the error), else
    /// the latest line; taken or not.
    pub fn last_words(&self) -> Option<&str> {
        let names_error = |line: &&String| {
            let lower = line.to_lowercase();
            ["error", "panic", "fatal", "exception"]
                .iter()
                .any(|word| lower.contains(word))
        };
        self.recent
            .iter()
            .rev()
            .find(names_error)
            .or_else(|| self.recent.back())
            .map(String::as_str)
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
        assert_eq!(log.last_words().map(str::len), Some(MAX_LINE_CHARS));
        assert_eq!(log.take(), (Vec::new(), 0));
    }

    #[test]
    fn the_last_words_are_the_latest_error_line_near_the_end() {
        let mut log = ServerLog::default();
        log.push("starting".into());
        assert_eq!(log.last_words(), Some("starting"));
        for line in [
            "node:internal/modules/cjs/loader:1228",
            "Error: Cannot find module '/w/tests/index.js'",
            "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
            "Node.js v20.20.2",
        ] {
            log.push(line.into());
        }
        assert_eq!(
            log.last_words(),
            Some("Error: Cannot find module '/w/tests/index.js'")
        );
        // An error long before the end is not the reason.
        for index in 0..LAST_WORDS_WINDOW {
            log.push(format!("request {index} served"));
        }
        assert_eq!(log.last_words(), Some("request 9 served"));
    }
}
