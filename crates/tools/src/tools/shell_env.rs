//! The environment a shell command gets: an allowlist of what programs need to find
//! their tools and speak the user's language, never a variable whose name says it
//! holds a secret, and a private temporary directory. rein's own API keys live in
//! variables the allowlist does not name, so no command can print them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Variables passed through as they are.
const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "COLORTERM",
    "NO_COLOR",
    "CI",
    "EDITOR",
    "PAGER",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "PYTHONPATH",
    "PYTHONHOME",
    "GOPATH",
    "GOROOT",
    "GOMODCACHE",
    "GOFLAGS",
    "JAVA_HOME",
    "NODE_PATH",
    "NVM_DIR",
    "NVM_BIN",
    "GEM_HOME",
    "GEM_PATH",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "MAKEFLAGS",
];

/// Parts of a name that mark it as holding a secret; such a variable is never passed,
/// whatever the allowlist says.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSW",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
];

/// Variables that name toolchain directories (`strict` lets commands read them).
const TOOLCHAIN_DIRS: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "GOROOT",
    "GOPATH",
    "JAVA_HOME",
    "NVM_DIR",
];

/// Whether `name` looks like it holds a secret.
fn names_a_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Whether `name` is passed to commands.
fn passed(name: &str) -> bool {
    !names_a_secret(name) && (PASSED.contains(&name) || name.starts_with("LC_"))
}

/// The environment of a command run with `vars` (rein's environment) and the private
/// temporary directory `temp`.
pub(crate) fn shell_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    temp: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(passed))
        .collect();
    for name in ["TMPDIR", "TMP", "TEMP"] {
        env.push((name.into(), temp.as_os_str().to_owned()));
    }
    env
}

/// The toolchain directories `env` names: the variables above, and for each `PATH`
/// entry under the home directory the directory above its `bin` (or `shims`), so a
/// toolchain installed there can read its own files.
pub(crate) fn toolchain_dirs(env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    let get = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut dirs: Vec<PathBuf> = TOOLCHAIN_DIRS
        .iter()
        .filter_map(|name| get(name))
        .map(PathBuf::from)
        .collect();
    let home = get("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        dirs.extend([".cargo", ".rustup"].map(|d| home.join(d)));
    }
    if let Some(path) = get("PATH") {
        for entry in std::env::split_paths(&path) {
            let top = match entry.file_name().and_then(|n| n.to_str()) {
                Some("bin" | "shims") => entry.parent().map(Path::to_path_buf),
                _ => Some(entry.clone()),
            };
            dirs.extend(top);
        }
    }
    dirs.retain(|d| d.is_absolute() && d != Path::new("/"));
    dirs.sort();
    dirs.dedup();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    #[test]
    fn secrets_and_unknown_variables_are_dropped() {
        let env = shell_env(
            vars(&[
                ("PATH", "/usr/bin"),
                ("LC_ALL", "C.UTF-8"),
                ("OPENAI_API_KEY", "sk-1"),
                ("GITHUB_TOKEN", "t"),
                ("MY_SERVICE_PASSWORD", "p"),
                ("REIN_REMOTE", "x"),
                ("AWS_SESSION_TOKEN", "s"),
            ]),
            Path::new("/tmp/rein-x"),
        );
        let names: Vec<&str> = env.iter().filter_map(|(n, _)| n.to_str()).collect();
        assert_eq!(names, ["PATH", "LC_ALL", "TMPDIR", "TMP", "TEMP"]);
    }

    #[test]
    fn toolchains_come_from_the_environment_and_path() {
        let env = vars(&[
            ("HOME", "/home/u"),
            ("PATH", "/home/u/.pyenv/shims:/usr/bin:/opt/node/bin"),
            ("VIRTUAL_ENV", "/work/venv"),
        ]);
        let dirs = toolchain_dirs(&env);
        for dir in [
            "/home/u/.pyenv",
            "/home/u/.cargo",
            "/work/venv",
            "/opt/node",
            "/usr",
        ] {
            assert!(dirs.contains(&PathBuf::from(dir)), "{dir} in {dirs:?}");
        }
        assert!(!dirs.contains(&PathBuf::from("/home/u")));
    }
}
