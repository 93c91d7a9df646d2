//! The shell's sandbox on Linux (Landlock): a command and every process it starts may
//! write only in the workspace and a private temporary directory, open no TCP
//! connection, signal nothing outside the sandbox and reach no abstract Unix socket.
//! `workspace` lets them read the rest of the system; `strict` only the system's own
//! directories and the toolchains the shell's environment names. The ruleset is
//! built in rein and applied in the child between `fork` and `exec` with two system
//! calls, so nothing allocates there.

use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::sandbox_mounts::ReadOnlyView;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetError, Scope, ABI,
};

/// How the shell is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Not at all: commands can do whatever the user can.
    Off,
    /// Writes only in the workspace and a private temporary directory; reads
    /// anywhere; no network.
    #[default]
    Workspace,
    /// As `workspace`, and reads only in the system's directories, the workspace and
    /// the toolchains the environment names (not the rest of the home directory).
    Strict,
}

/// The lowest Landlock ABI that can confine the network (TCP, Linux 6.7).
const MIN_ABI: i32 = 4;
/// The ABI that adds signal and abstract Unix socket scoping (Linux 6.12).
const SCOPE_ABI: i32 = 6;

/// Directories every command may read (and run programs from) in `strict` mode.
const SYSTEM_DIRS: [&str; 12] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/proc", "/sys", "/dev",
    "/run",
];
/// Devices a command may write to.
const WRITABLE_DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

impl SandboxMode {
    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::Workspace => "workspace",
            SandboxMode::Strict => "strict",
        }
    }

    /// Why this mode cannot be had on this kernel, in one line; `None` when it can.
    pub fn unavailable(self) -> Option<String> {
        if self == SandboxMode::Off {
            return None;
        }
        match landlock_abi() {
            abi if abi <= 0 => Some(format!(
                "the shell is not offered: this kernel has no Landlock, so --sandbox {} cannot confine it (use --sandbox off to run it unconfined)",
                self.as_str()
            )),
            abi if abi < MIN_ABI => Some(format!(
                "the shell is not offered: this kernel's Landlock (ABI {abi}) cannot keep commands off the network (ABI {MIN_ABI}, Linux 6.7, can); use --sandbox off to run it unconfined"
            )),
            _ => None,
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a sandbox mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (off, workspace or strict)")]
pub struct UnknownSandboxMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(SandboxMode::Off),
            "workspace" => Ok(SandboxMode::Workspace),
            "strict" => Ok(SandboxMode::Strict),
            other => Err(UnknownSandboxMode(other.to_string())),
        }
    }
}

/// The running kernel's Landlock ABI version (0 or less: none), asked once per process.
pub fn landlock_abi() -> i32 {
    static VERSION: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: with a null attribute pointer, size 0 and the version flag the call
        // only returns the ABI version (or an error); it touches no memory.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        i32::try_from(version).unwrap_or(0)
    })
}

/// A ruleset and a read-only view ready to be applied in a child process.
#[derive(Debug)]
pub(crate) struct PreparedSandbox {
    fd: OwnedFd,
    view: Option<ReadOnlyView>,
}

impl PreparedSandbox {
    /// Builds the ruleset of `mode` for a workspace at `root` with the private
    /// temporary directory `temp`; `toolchains` are read-only directories `strict`
    /// adds. `None` for [`SandboxMode::Off`].
    pub(crate) fn new(
        mode: SandboxMode,
        root: &Path,
        temp: &Path,
        toolchains: &[PathBuf],
    ) -> Result<Option<Self>, String> {
        if mode == SandboxMode::Off {
            return Ok(None);
        }
        if let Some(reason) = mode.unavailable() {
            return Err(reason);
        }
        let abi = ABI::from(landlock_abi());
        match Self::build(mode, abi, root, temp, toolchains) {
            Ok(Some(fd)) => Ok(Some(Self {
                fd,
                view: ReadOnlyView::new(&[root, temp]),
            })),
            Ok(None) => Err("cannot set up the shell's sandbox: Landlock made no ruleset".into()),
            Err(e) => Err(format!("cannot set up the shell's sandbox: {e}")),
        }
    }

    fn build(
        mode: SandboxMode,
        abi: ABI,
        root: &Path,
        temp: &Path,
        toolchains: &[PathBuf],
    ) -> Result<Option<OwnedFd>, RulesetError> {
        let read = AccessFs::from_read(abi);
        let all = AccessFs::from_all(abi);
        let mut ruleset = Ruleset::default()
            .handle_access(all)?
            .handle_access(AccessNet::from_all(abi))?;
        if landlock_abi() >= SCOPE_ABI {
            ruleset = ruleset.scope(Scope::from_all(abi))?;
        }
        let readable: Vec<PathBuf> = match mode {
            SandboxMode::Strict => SYSTEM_DIRS
                .iter()
                .map(PathBuf::from)
                .chain(toolchains.iter().cloned())
                .collect(),
            _ => vec![PathBuf::from("/")],
        };
        let created = ruleset
            .create()?
            .add_rules(path_beneath_rules(&readable, read))?
            .add_rules(path_beneath_rules([root, temp], all))?
            .add_rules(path_beneath_rules(WRITABLE_DEVICES, all))?;
        Ok(created.into())
    }

    /// Confines the calling process: the read-only view first (Landlock forbids
    /// mounting), then the ruleset. Meant for the child between `fork` and `exec`:
    /// system calls only, no allocation.
    pub(crate) fn apply_in_child(&self) -> std::io::Result<()> {
        if let Some(view) = &self.view {
            view.enter()?;
        }
        let fd = self.fd.as_raw_fd();
        // SAFETY: prctl and landlock_restrict_self take integers only; the ruleset fd
        // is open for as long as `self` lives.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print() {
        for mode in [
            SandboxMode::Off,
            SandboxMode::Workspace,
            SandboxMode::Strict,
        ] {
            assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
        }
        assert!("none".parse::<SandboxMode>().is_err());
        assert_eq!(SandboxMode::default(), SandboxMode::Workspace);
        assert_eq!(SandboxMode::Off.unavailable(), None);
    }
}
