//! A run's fresh workspace: `input/` copied into a temporary directory, then the
//! task's setup steps (named pipes, huge or single-line files, binary files).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::task::Task;
use crate::EvalError;

/// One setup step of `task.toml` (`[[setup]]` with a `kind`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SetupStep {
    /// A named pipe (FIFO) nobody writes to: reading it blocks forever.
    Fifo {
        /// Where, relative to the workspace.
        path: String,
    },
    /// A file of `count` lines made from `line` (`{n}` becomes the line number), with
    /// `insert` placed as line `at` (from 1) when given.
    Lines {
        /// Where, relative to the workspace.
        path: String,
        /// How many generated lines.
        count: usize,
        /// The line pattern.
        line: String,
        /// The line number of the inserted line.
        #[serde(default)]
        at: Option<usize>,
        /// The inserted line.
        #[serde(default)]
        insert: Option<String>,
    },
    /// One line of `length` characters with `needle` in its middle.
    LongLine {
        /// Where, relative to the workspace.
        path: String,
        /// The line's length.
        length: usize,
        /// Text placed in the middle.
        #[serde(default)]
        needle: Option<String>,
    },
    /// `bytes` bytes of deterministic binary data (NUL bytes included).
    Binary {
        /// Where, relative to the workspace.
        path: String,
        /// How many bytes.
        bytes: usize,
    },
}

impl SetupStep {
    /// The step's path.
    fn path(&self) -> &str {
        match self {
            SetupStep::Fifo { path }
            | SetupStep::Lines { path, .. }
            | SetupStep::LongLine { path, .. }
            | SetupStep::Binary { path, .. } => path,
        }
    }

    /// Checks the step without running it: a relative path that stays inside.
    pub fn check(&self) -> Result<(), String> {
        relative(self.path()).map(|_| ())
    }

    /// Runs the step in `root`.
    fn apply(&self, root: &Path) -> Result<(), String> {
        let path = root.join(relative(self.path())?);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let write = |bytes: &[u8]| {
            std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
        };
        match self {
            SetupStep::Fifo { .. } => make_fifo(&path),
            SetupStep::Lines {
                count,
                line,
                at,
                insert,
                ..
            } => {
                let mut text = String::with_capacity(count * (line.len() + 4));
                for n in 1..=*count {
                    if Some(n) == *at {
                        if let Some(inserted) = insert {
                            text.push_str(inserted);
                            text.push('\n');
                        }
                    }
                    text.push_str(&line.replace("{n}", &n.to_string()));
                    text.push('\n');
                }
                write(text.as_bytes())
            }
            SetupStep::LongLine { length, needle, .. } => {
                let filler = "lorem ipsum dolor sit amet ";
                let mut text: String = filler.chars().cycle().take(*length).collect();
                if let Some(needle) = needle {
                    let middle = (text.len() / 2).min(text.len());
                    text.insert_str(middle, needle);
                }
                text.push('\n');
                write(text.as_bytes())
            }
            SetupStep::Binary { bytes, .. } => {
                // A fixed linear congruential sequence: the same bytes every run.
                let mut state: u32 = 0x2545_f491;
                let data: Vec<u8> = (0..*bytes)
                    .map(|i| {
                        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        if i % 7 == 0 {
                            0
                        } else {
                            (state >> 24) as u8
                        }
                    })
                    .collect();
                write(&data)
            }
        }
    }
}

/// `path` as a relative path with no `..`, or why not.
fn relative(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if path.is_empty()
        || p.components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "setup path `{path}` must be relative and stay inside the workspace"
        ));
    }
    Ok(p.to_path_buf())
}

#[cfg(unix)]
fn make_fifo(path: &Path) -> Result<(), String> {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .map_err(|e| format!("mkfifo {}: {e}", path.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("mkfifo {} failed ({status})", path.display()))
    }
}

#[cfg(not(unix))]
fn make_fifo(path: &Path) -> Result<(), String> {
    Err(format!(
        "{}: named pipes need a Unix system",
        path.display()
    ))
}

/// Copies `from` into `to` recursively (hidden entries included).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// A fresh temporary workspace for one run of `task`; removed when dropped.
pub fn prepare_workspace(task: &Task) -> Result<tempfile::TempDir, EvalError> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("rein-eval-{}-", task.id))
        .tempdir()
        .map_err(|source| EvalError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let input = task.input_dir();
    if input.is_dir() {
        copy_tree(&input, dir.path()).map_err(|source| EvalError::Io {
            path: input.clone(),
            source,
        })?;
    }
    for step in &task.spec.setup {
        step.apply(dir.path()).map_err(|reason| EvalError::Task {
            path: task.dir.join("task.toml"),
            reason: format!("setup: {reason}"),
        })?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_workspace_are_refused() {
        assert!(relative("a/b.txt").is_ok());
        assert!(relative("../x").is_err());
        assert!(relative("/etc/passwd").is_err());
        assert!(relative("").is_err());
    }

    #[test]
    fn lines_insert_the_key_line_at_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let step = SetupStep::Lines {
            path: "logs/big.log".into(),
            count: 5,
            line: "ok {n}".into(),
            at: Some(3),
            insert: Some("KEY".into()),
        };
        step.apply(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("logs/big.log")).unwrap();
        assert_eq!(text, "ok 1\nok 2\nKEY\nok 3\nok 4\nok 5\n");
    }

    #[cfg(unix)]
    #[test]
    fn fifo_is_a_named_pipe() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        SetupStep::Fifo { path: "p".into() }
            .apply(dir.path())
            .unwrap();
        let kind = std::fs::symlink_metadata(dir.path().join("p"))
            .unwrap()
            .file_type();
        assert!(kind.is_fifo());
    }
}
