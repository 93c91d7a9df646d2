//! The shell's sandbox on Linux (Landlock): a command and every process it starts may
//! write only in the workspace and a private temporary directory, open no TCP
//! connection, signal nothing outside the sandbox and reach no abstract Unix socket.
//! `workspace` lets them read the rest of the system; `strict` only the system's own
//! directories and the toolchains the shell's environment names. The ruleset is
//! built in rein and applied in the child between `fork` and `exec` with two system
//! calls, so nothing allocates there.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetError, Scope, ABI,
};

use crate::sandbox::SandboxMode;
use crate::sandbox_mounts::ReadOnlyView;

/// The ABI that adds signal and abstract Unix socket scoping (Linux 6.12).
const SCOPE_ABI: i32 = 6;

/// Directories every command may read (and run programs from) in `strict` mode.
const SYSTEM_DIRS: [&str; 12] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/proc", "/sys", "/dev",
    "/run",
];
/// Devices a command may write to.
const WRITABLE_DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// The running kernel's Landlock ABI version (0 or less: none), asked once per process.
pub(crate) fn kernel_abi() -> i32 {
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
        let abi = ABI::from(kernel_abi());
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
        if kernel_abi() >= SCOPE_ABI {
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
