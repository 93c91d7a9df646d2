//! What a tool call returns and what it touches.

use std::path::PathBuf;

/// The paths a call reads or writes, for the loop's batch scheduler: reads of
/// different paths run together, a write excludes every other call on its paths,
/// and a barrier runs alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// The call only reads these absolute paths.
    Read(Vec<PathBuf>),
    /// The call writes these absolute paths.
    Write(Vec<PathBuf>),
    /// The call may touch anything (the shell).
    Barrier,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// Whether the call did what was asked.
    pub ok: bool,
    /// The reply for the model: the result, or on failure what to do instead.
    pub text: String,
    /// Whether a time limit stopped the call.
    pub timed_out: bool,
    /// Files the call created or changed (absolute paths).
    pub changed_files: Vec<PathBuf>,
    /// The call worked and found nothing at all (a search without any match, even
    /// among its probes): a result to move on from, not one to answer with.
    pub found_nothing: bool,
    /// Tools not offered so far that this result makes callable from the next turn
    /// (`tool_search`): their names.
    pub reveals: Vec<String>,
}

impl ToolOutcome {
    /// A successful call with this reply.
    pub fn success(text: impl Into<String>) -> Self {
        Self {
            ok: true,
            text: text.into(),
            timed_out: false,
            changed_files: Vec::new(),
            found_nothing: false,
            reveals: Vec::new(),
        }
    }

    /// A failed call with this reply.
    pub fn failure(text: impl Into<String>) -> Self {
        Self {
            ok: false,
            ..Self::success(text)
        }
    }

    /// The same outcome, found nothing at all.
    pub fn nothing_found(mut self) -> Self {
        self.found_nothing = true;
        self
    }

    /// The same outcome, making the tools `names` callable from the next turn.
    pub fn revealing(mut self, names: Vec<String>) -> Self {
        self.reveals = names;
        self
    }

    /// The same outcome, recording that `path` was created or changed.
    pub fn with_changed_file(mut self, path: PathBuf) -> Self {
        self.changed_files.push(path);
        self
    }
}
