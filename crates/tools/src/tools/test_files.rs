//! A workspace of given files in a temporary directory, for the tools' unit tests.

use crate::{ToolLimits, Workspace};

/// A workspace holding `files` (path, text), with the default limits; the directory
/// lives as long as the returned guard.
pub(crate) fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
    (dir, workspace)
}
