//! State one run keeps between tool calls.

use std::path::PathBuf;

use crate::read_memory::ReadMemory;

/// What the tools remember between calls of one run.
#[derive(Debug)]
pub(crate) struct RunState {
    /// The shell's working directory (canonical, inside the root).
    pub shell_cwd: PathBuf,
    /// The file ranges `read_file` has shown.
    pub reads: ReadMemory,
    /// Shell outputs saved so far, for naming the next one.
    pub saved_outputs: u64,
}

impl RunState {
    /// The state at the start of a run: the shell starts at the root.
    pub fn new(root: PathBuf) -> Self {
        Self {
            shell_cwd: root,
            reads: ReadMemory::default(),
            saved_outputs: 0,
        }
    }
}
