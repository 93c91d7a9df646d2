//! The shell's sandbox where Linux's Landlock is not available: none can be made, so
//! only `--sandbox off` runs the shell (`SandboxMode::unavailable` says why).

use std::path::{Path, PathBuf};

use crate::sandbox::SandboxMode;

/// A sandbox ready for a child process; none exists on this system.
#[derive(Debug)]
pub(crate) enum PreparedSandbox {}

impl PreparedSandbox {
    /// `None` for [`SandboxMode::Off`]; any other mode is refused with the reason.
    pub(crate) fn new(
        mode: SandboxMode,
        _root: &Path,
        _temp: &Path,
        _toolchains: &[PathBuf],
    ) -> Result<Option<Self>, String> {
        match mode.unavailable() {
            None => Ok(None),
            Some(reason) => Err(reason),
        }
    }

    /// Never called: no sandbox exists to apply.
    pub(crate) fn apply_in_child(&self) -> std::io::Result<()> {
        match *self {}
    }
}
