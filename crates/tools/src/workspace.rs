//! The workspace: the directory the tools are confined to, their budgets, and the
//! state one run keeps between calls.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::confine::{confine, Confinement};
use crate::limits::ToolLimits;
use crate::run_state::RunState;

/// Why a workspace could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The root does not exist or cannot be resolved.
    #[error("workspace root {} cannot be resolved: {source}", .path.display())]
    Unresolvable {
        /// The root as given.
        path: PathBuf,
        /// The error from the filesystem.
        source: std::io::Error,
    },
    /// The root is not a directory.
    #[error("workspace root {} is not a directory", .path.display())]
    NotADirectory {
        /// The root as given.
        path: PathBuf,
    },
}

/// The directory every tool path is confined to, with the budgets of the tools and
/// the per-run state: the shell's working directory, what has been read, and how
/// many shell outputs were saved.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    limits: ToolLimits,
    state: Mutex<RunState>,
    shell_temp: OnceLock<tempfile::TempDir>,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be an existing directory; it is
    /// canonicalized.
    pub fn new(root: impl AsRef<Path>, limits: ToolLimits) -> Result<Self, WorkspaceError> {
        let given = root.as_ref();
        let root = std::fs::canonicalize(given).map_err(|source| WorkspaceError::Unresolvable {
            path: given.into(),
            source,
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::NotADirectory { path: given.into() });
        }
        Ok(Self {
            state: Mutex::new(RunState::new(root.clone())),
            root,
            limits,
            shell_temp: OnceLock::new(),
        })
    }

    /// The shell's private temporary directory (its `TMPDIR`, writable under the
    /// sandbox), created on first use and removed with the workspace.
    pub fn shell_temp(&self) -> std::io::Result<&Path> {
        if let Some(dir) = self.shell_temp.get() {
            return Ok(dir.path());
        }
        let dir = tempfile::Builder::new().prefix("rein-shell-").tempdir()?;
        // Another thread may have won the race; its directory is the one kept.
        let _ = self.shell_temp.set(dir);
        self.shell_temp
            .get()
            .map(|d| d.path())
            .ok_or_else(|| std::io::Error::other("the shell's temporary directory is missing"))
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The tools' budgets.
    pub fn limits(&self) -> &ToolLimits {
        &self.limits
    }

    /// Turns [`ToolLimits::result_context`] on or off.
    pub fn set_result_context(&mut self, on: bool) {
        self.limits.result_context = on;
    }

    /// Turns [`ToolLimits::data_hint`] on or off.
    pub fn set_data_hint(&mut self, on: bool) {
        self.limits.data_hint = on;
    }

    /// Resolves a path a tool was given: relative paths start at the root, and the
    /// result must lie inside the root after symbolic links and `..` are resolved.
    /// Paths that do not exist yet are checked through their longest existing
    /// ancestor.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, Confinement> {
        confine(&self.root, &self.root, path)
    }

    /// Resolves a path as the shell sees it: relative paths start at the shell's
    /// working directory. The same confinement applies.
    pub fn resolve_in_shell_cwd(&self, path: &str) -> Result<PathBuf, Confinement> {
        confine(&self.root, &self.shell_cwd(), path)
    }

    /// `path` for display: relative to the root (`.` for the root itself), or
    /// absolute when it lies outside.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(inside) if inside.as_os_str().is_empty() => ".".to_string(),
            Ok(inside) => inside.to_string_lossy().into_owned(),
            Err(_) => path.display().to_string(),
        }
    }

    /// The closest existing directory at or above `path` (resolved), never above the
    /// root: where a look at a path that does not exist goes on.
    pub fn nearest_directory(&self, path: &Path) -> PathBuf {
        path.ancestors()
            .take_while(|dir| dir.starts_with(&self.root))
            .find(|dir| dir.is_dir())
            .map_or_else(|| self.root.clone(), Path::to_path_buf)
    }

    /// The shell's working directory; it starts at the root and follows `cd`.
    pub fn shell_cwd(&self) -> PathBuf {
        self.with_state(|state| state.shell_cwd.clone())
    }

    /// Where full shell outputs are saved.
    pub fn outputs_dir(&self) -> PathBuf {
        match &self.limits.outputs_dir {
            Some(dir) if dir.is_absolute() => dir.clone(),
            Some(dir) => self.root.join(dir),
            None => self.root.join(".rein").join("outputs"),
        }
    }

    /// Forgets which file ranges were read, so that the next read of any range shows
    /// its content again (for example after the conversation was compacted).
    pub fn forget_reads(&self) {
        self.with_state(|state| state.reads.clear());
    }

    /// Runs `f` with the per-run state locked.
    pub(crate) fn with_state<R>(&self, f: impl FnOnce(&mut RunState) -> R) -> R {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_canonicalized() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let through_dots = dir.path().join("ws/../ws");
        let workspace = Workspace::new(&through_dots, ToolLimits::default()).unwrap();
        assert_eq!(
            workspace.root(),
            std::fs::canonicalize(dir.path().join("ws")).unwrap()
        );
        assert_eq!(workspace.shell_cwd(), workspace.root());
    }

    #[test]
    fn a_missing_root_or_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Workspace::new(dir.path().join("missing"), ToolLimits::default());
        assert!(matches!(missing, Err(WorkspaceError::Unresolvable { .. })));
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let file = Workspace::new(dir.path().join("file"), ToolLimits::default());
        assert!(matches!(file, Err(WorkspaceError::NotADirectory { .. })));
    }

    #[test]
    fn relative_display_paths() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
        let root = workspace.root().to_path_buf();
        assert_eq!(workspace.relative(&root), ".");
        assert_eq!(workspace.relative(&root.join("src/a.rs")), "src/a.rs");
        assert_eq!(
            workspace.relative(Path::new("/elsewhere/x")),
            "/elsewhere/x"
        );
    }

    #[test]
    fn the_nearest_directory_of_a_missing_path_stays_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
        let root = workspace.root().to_path_buf();
        std::fs::create_dir_all(root.join("src/bin")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        assert_eq!(
            workspace.nearest_directory(&root.join("src/bin/gone/x")),
            root.join("src/bin")
        );
        assert_eq!(
            workspace.nearest_directory(&root.join("src/a.rs/x")),
            root.join("src")
        );
        assert_eq!(workspace.nearest_directory(&root.join("workspace")), root);
        assert_eq!(workspace.nearest_directory(Path::new("/elsewhere/x")), root);
    }

    #[test]
    fn outputs_dir_defaults_under_the_root_and_follows_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
        assert_eq!(
            workspace.outputs_dir(),
            workspace.root().join(".rein/outputs")
        );
        let limits = ToolLimits {
            outputs_dir: Some(PathBuf::from("logs")),
            ..ToolLimits::default()
        };
        let workspace = Workspace::new(dir.path(), limits).unwrap();
        assert_eq!(workspace.outputs_dir(), workspace.root().join("logs"));
    }
}
