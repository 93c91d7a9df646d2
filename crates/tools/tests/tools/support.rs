//! Shared helpers: a workspace in a temporary directory, calls, FIFOs.

use std::ffi::CString;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rein_tools::{Tool, ToolLimits, ToolOutcome, Workspace};
use serde_json::Value;

/// A workspace rooted at a fresh temporary directory.
pub fn workspace() -> (tempfile::TempDir, Workspace) {
    workspace_with(ToolLimits::default())
}

/// A workspace with these limits.
pub fn workspace_with(limits: ToolLimits) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path(), limits).unwrap();
    (dir, workspace)
}

/// Calls `tool` with `args`.
pub fn call(tool: &dyn Tool, workspace: &Workspace, args: Value) -> ToolOutcome {
    tool.call(&args, workspace)
}

/// Calls `tool` on another thread and fails the test if it takes longer than
/// `limit` (a call that blocks must not hang the suite).
pub fn call_within(
    tool: impl Tool + 'static,
    workspace_root: &Path,
    args: Value,
    limit: Duration,
) -> ToolOutcome {
    let (sender, receiver) = mpsc::channel();
    let root = workspace_root.to_path_buf();
    std::thread::spawn(move || {
        let workspace = Workspace::new(root, ToolLimits::default()).unwrap();
        let _ = sender.send(tool.call(&args, &workspace));
    });
    receiver.recv_timeout(limit).expect("the call blocked")
}

/// Creates a named pipe at `path`.
pub fn mkfifo(path: &Path) {
    let c_path = CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

/// Writes `content` to `relative` under the workspace root, creating directories.
pub fn write(workspace: &Workspace, relative: &str, content: &str) {
    let path = workspace.root().join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}
