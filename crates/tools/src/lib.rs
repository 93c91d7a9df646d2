//! rein's built-in agent tools — `read_file`, `write_file`, `edit_file`, `search`,
//! `list_dir` and `shell` — and the [`Workspace`] that confines every path they touch
//! to one directory. Each call returns a bounded [`ToolOutcome`] whose text tells the
//! model what to do next, also when the call failed.
#![deny(missing_docs)]

mod args;
mod atomic_write;
mod confine;
mod description_cleanup;
mod file_kind;
mod limits;
mod line_changes;
mod outcome;
mod read_memory;
mod registry;
mod run_record;
mod run_state;
mod sandbox;
#[cfg(target_os = "linux")]
mod sandbox_landlock;
#[cfg(target_os = "linux")]
mod sandbox_mounts;
#[cfg(not(target_os = "linux"))]
mod sandbox_unconfined;
mod similar_files;
mod text;
mod tool;
mod tools;
mod workspace;

pub use atomic_write::write_atomically;
pub use confine::Confinement;
pub use limits::ToolLimits;
pub use outcome::{Access, ToolOutcome};
pub use registry::Registry;
pub use run_record::{undo, Change, FileState, RecordError, RunRecord, RunRecorder, UndoReport};
pub use sandbox::{landlock_abi, SandboxMode, UnknownSandboxMode};
pub use text::window_around;
pub use tool::Tool;
pub use tools::{
    word_lines, EditFile, ListDir, QueryData, ReadFile, ReplaceInFiles, Search, Shell, WriteFile,
};
pub use workspace::{Workspace, WorkspaceError};
