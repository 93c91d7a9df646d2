//! How the shell is confined (`--sandbox`): the modes, and on Linux the sandbox that
//! applies them (`sandbox_landlock`); elsewhere only `off` runs the shell.

use std::fmt;
use std::str::FromStr;

#[cfg(target_os = "linux")]
pub(crate) use crate::sandbox_landlock::PreparedSandbox;
#[cfg(not(target_os = "linux"))]
pub(crate) use crate::sandbox_unconfined::PreparedSandbox;

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
        if !cfg!(target_os = "linux") {
            return Some(format!(
                "the shell is not offered: --sandbox {} needs Linux's Landlock, which this system does not have (use --sandbox off to run it unconfined)",
                self.as_str()
            ));
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

/// The running kernel's Landlock ABI version (0 or less: none; always 0 off Linux).
pub fn landlock_abi() -> i32 {
    #[cfg(target_os = "linux")]
    return crate::sandbox_landlock::kernel_abi();
    #[cfg(not(target_os = "linux"))]
    return 0;
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
