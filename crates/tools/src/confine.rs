//! Path confinement: every path a tool touches must lie inside the workspace root
//! once symbolic links and `..` are resolved.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused. The message names the path and the workspace root and
/// says what to use instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Confinement {
    /// The path lies outside the root.
    #[error("`{path}` is outside the workspace ({}); use a path inside it", .root.display())]
    Outside {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path goes through a symbolic link that points outside the root.
    #[error(
        "`{path}` resolves through a symbolic link to {}, which is outside the workspace ({}); use a path inside it",
        .target.display(),
        .root.display()
    )]
    SymlinkOutside {
        /// The path as given.
        path: String,
        /// Where the link leads.
        target: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path names a symbolic link whose target cannot be resolved.
    #[error(
        "`{path}` is a symbolic link whose target does not exist or loops; use a path inside the workspace ({}) that is not a broken link",
        .root.display()
    )]
    BrokenSymlink {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path starts with `~`, which tools do not expand.
    #[error(
        "`{path}` starts with `~`, which is not expanded and would point outside the workspace ({}); use a path relative to the workspace root",
        .root.display()
    )]
    HomeDirectory {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path contains a NUL byte.
    #[error("the path contains a NUL byte; use a plain path inside the workspace ({})", .root.display())]
    NulByte {
        /// The workspace root.
        root: PathBuf,
    },
    /// The path is empty.
    #[error("the path is empty; use `.` for the workspace root ({}) or a path inside it", .root.display())]
    Empty {
        /// The workspace root.
        root: PathBuf,
    },
}

/// Resolves `requested` against `base` (absolute paths stand alone) and checks that
/// the result lies inside `root`, which must be canonical. The longest existing
/// ancestor is canonicalized, so symbolic links anywhere on the way are followed;
/// the components that do not exist yet are appended with `.` and `..` applied.
pub(crate) fn confine(root: &Path, base: &Path, requested: &str) -> Result<PathBuf, Confinement> {
    if requested.contains('\0') {
        return Err(Confinement::NulByte { root: root.into() });
    }
    if requested.trim().is_empty() {
        return Err(Confinement::Empty { root: root.into() });
    }
    if requested.starts_with('~') {
        return Err(Confinement::HomeDirectory {
            path: requested.into(),
            root: root.into(),
        });
    }
    let joined = base.join(requested);
    let resolved = resolve_existing_prefix(&joined).ok_or_else(|| Confinement::BrokenSymlink {
        path: requested.into(),
        root: root.into(),
    })?;
    if resolved.starts_with(root) {
        return Ok(resolved);
    }
    if normalize_lexically(&joined).starts_with(root) {
        return Err(Confinement::SymlinkOutside {
            path: requested.into(),
            target: resolved,
            root: root.into(),
        });
    }
    Err(Confinement::Outside {
        path: requested.into(),
        root: root.into(),
    })
}

/// Canonicalizes the longest ancestor of `path` that exists and appends the rest.
/// `None` when the first missing component is itself a symbolic link (broken or
/// looping), since following it later could land anywhere.
fn resolve_existing_prefix(path: &Path) -> Option<PathBuf> {
    for ancestor in path.ancestors() {
        let Ok(canonical) = fs::canonicalize(ancestor) else {
            continue;
        };
        let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
        let mut resolved = canonical;
        let mut first_missing = true;
        for component in rest.components() {
            match component {
                Component::Normal(name) => {
                    resolved.push(name);
                    if first_missing && fs::symlink_metadata(&resolved).is_ok() {
                        return None;
                    }
                    first_missing = false;
                }
                Component::ParentDir => {
                    resolved.pop();
                }
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        return Some(resolved);
    }
    None
}

/// Applies `.` and `..` without touching the filesystem.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normalized.pop();
            }
            Component::CurDir => {}
            other => normalized.push(other.as_os_str()),
        }
    }
    normalized
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_dir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("root");
        fs::create_dir(&root).unwrap();
        (dir, root)
    }

    #[test]
    fn relative_and_absolute_paths_inside_are_accepted() {
        let (_dir, root) = root_dir();
        fs::write(root.join("a.txt"), "x").unwrap();
        assert_eq!(confine(&root, &root, "a.txt").unwrap(), root.join("a.txt"));
        let absolute = root.join("a.txt").display().to_string();
        assert_eq!(
            confine(&root, &root, &absolute).unwrap(),
            root.join("a.txt")
        );
        assert_eq!(confine(&root, &root, ".").unwrap(), root);
    }

    #[test]
    fn missing_components_are_appended_with_dots_applied() {
        let (_dir, root) = root_dir();
        assert_eq!(
            confine(&root, &root, "new/./deeper/../file.txt").unwrap(),
            root.join("new/file.txt")
        );
    }

    #[test]
    fn escaping_through_missing_components_is_refused() {
        let (_dir, root) = root_dir();
        let refused = confine(&root, &root, "new/../../x").unwrap_err();
        assert!(
            matches!(refused, Confinement::Outside { .. }),
            "{refused:?}"
        );
    }

    #[test]
    fn a_base_other_than_the_root_resolves_relative_paths() {
        let (_dir, root) = root_dir();
        fs::create_dir(root.join("sub")).unwrap();
        let resolved = confine(&root, &root.join("sub"), "x.txt").unwrap();
        assert_eq!(resolved, root.join("sub/x.txt"));
    }

    #[test]
    fn a_dangling_symlink_is_refused() {
        let (_dir, root) = root_dir();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
        let refused = confine(&root, &root, "dangling").unwrap_err();
        assert!(
            matches!(refused, Confinement::BrokenSymlink { .. }),
            "{refused:?}"
        );
    }

    #[test]
    fn the_message_names_the_path_and_root() {
        let (_dir, root) = root_dir();
        let message = confine(&root, &root, "../x").unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "`../x` is outside the workspace ({}); use a path inside it",
                root.display()
            )
        );
    }
}
