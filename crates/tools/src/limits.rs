//! Budgets that keep every tool reply bounded, and how far the shell may reach.

use std::path::PathBuf;
use std::time::Duration;

use crate::SandboxMode;

/// Budgets for tool replies and the shell. The defaults suit a small local model
/// with a context of a few thousand tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// Lines `read_file` shows per call when the model gives no `limit` (default 200).
    pub read_lines: usize,
    /// Characters `read_file` shows per call (default 8000).
    pub read_chars: usize,
    /// Default time limit of a shell command (default 60 s); a call may ask for up
    /// to four times this.
    pub shell_timeout: Duration,
    /// Characters of shell output kept in the reply (default 4000); the full output
    /// goes to a file under [`ToolLimits::outputs_dir`].
    pub output_chars: usize,
    /// Matches `search` lists per call (default 50).
    pub search_results: usize,
    /// Entries `list_dir` lists per call (default 200).
    pub list_entries: usize,
    /// Where full shell outputs are saved; `None` means `.rein/outputs` under the
    /// workspace root.
    pub outputs_dir: Option<PathBuf>,
    /// How shell commands are confined (default: to the workspace, no network).
    pub sandbox: SandboxMode,
    /// Results carry what the next step needs (default on): a content search hit's
    /// enclosing line, what a search's glob left out, the lines a whole-file write
    /// removed.
    pub result_context: bool,
    /// A search or read of a data file ends with what the file holds and that
    /// `query_data` counts, sums and picks its records (default off; on where the
    /// tool is offered).
    pub data_hint: bool,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            read_lines: 200,
            read_chars: 8000,
            shell_timeout: Duration::from_secs(60),
            output_chars: 4000,
            search_results: 50,
            list_entries: 200,
            outputs_dir: None,
            sandbox: SandboxMode::default(),
            result_context: true,
            data_hint: false,
        }
    }
}
