//! File-system graders: the workspace's final state against `expected/`, a text, a
//! pattern, or the file as `input/` had it.

use std::path::{Path, PathBuf};

/// Text with `\r\n` as `\n` and trailing blank lines and spaces removed.
fn normalized(text: &str) -> String {
    text.replace("\r\n", "\n").trim_end().to_string()
}

fn read(root: &Path, path: &str) -> Result<String, String> {
    let full = root.join(path);
    std::fs::read(&full)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| format!("{path}: {e}"))
}

/// Every file under `expected` (recursively) in `workspace`, equal after normalizing.
pub fn match_expected(expected: &Path, workspace: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    collect(expected, &mut files).map_err(|e| format!("expected/: {e}"))?;
    if files.is_empty() {
        return Err("expected/ holds no files".into());
    }
    for file in &files {
        let relative = file.strip_prefix(expected).unwrap_or(file);
        let shown = relative.display().to_string();
        let want = std::fs::read(file).map_err(|e| format!("expected/{shown}: {e}"))?;
        let have = std::fs::read(workspace.join(relative))
            .map_err(|_| format!("{shown} is missing from the workspace"))?;
        let (want, have) = (
            normalized(&String::from_utf8_lossy(&want)),
            normalized(&String::from_utf8_lossy(&have)),
        );
        if want != have {
            let line = want
                .lines()
                .zip(have.lines())
                .position(|(w, h)| w != h)
                .unwrap_or_else(|| want.lines().count().min(have.lines().count()));
            return Err(format!(
                "{shown} differs from expected/ at line {}",
                line + 1
            ));
        }
    }
    Ok(format!("{} file(s) as expected", files.len()))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        if entry.file_type()?.is_dir() {
            collect(&entry.path(), out)?;
        } else {
            out.push(entry.path());
        }
    }
    Ok(())
}

/// Whether `path` contains `text` (when `wanted`) or lacks it (when not).
pub fn contains(workspace: &Path, path: &str, text: &str, wanted: bool) -> Result<String, String> {
    let content = read(workspace, path)?;
    match (content.contains(text), wanted) {
        (true, true) => Ok(format!("{path} contains {text:?}")),
        (false, false) => Ok(format!("{path} lacks {text:?}")),
        (false, true) => Err(format!("{path} does not contain {text:?}")),
        (true, false) => Err(format!("{path} still contains {text:?}")),
    }
}

/// Whether `path` matches `pattern`.
pub fn matches(workspace: &Path, path: &str, pattern: &str) -> Result<String, String> {
    let regex = regex::Regex::new(pattern).map_err(|e| format!("bad regex: {e}"))?;
    let content = read(workspace, path)?;
    if regex.is_match(&content) {
        Ok(format!("{path} matches /{pattern}/"))
    } else {
        Err(format!("{path} does not match /{pattern}/"))
    }
}

/// Whether nothing exists at `path`.
pub fn absent(workspace: &Path, path: &str) -> Result<String, String> {
    if std::fs::symlink_metadata(workspace.join(path)).is_ok() {
        Err(format!("{path} exists"))
    } else {
        Ok(format!("{path} does not exist"))
    }
}

/// Whether `path` is byte for byte what `input/` had.
pub fn unchanged(input: &Path, workspace: &Path, path: &str) -> Result<String, String> {
    let before = std::fs::read(input.join(path)).map_err(|e| format!("input/{path}: {e}"))?;
    let after = std::fs::read(workspace.join(path)).map_err(|_| format!("{path} was removed"))?;
    if before == after {
        Ok(format!("{path} unchanged"))
    } else {
        Err(format!("{path} was changed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        dir
    }

    #[test]
    fn expected_files_pass_when_equal_and_fail_when_different_or_missing() {
        let expected = tree(&[("a.txt", "one\ntwo\n"), ("sub/b.txt", "x")]);
        let good = tree(&[("a.txt", "one\r\ntwo"), ("sub/b.txt", "x\n\n")]);
        assert!(match_expected(expected.path(), good.path()).is_ok());
        let wrong = tree(&[("a.txt", "one\nTWO\n"), ("sub/b.txt", "x")]);
        let err = match_expected(expected.path(), wrong.path()).unwrap_err();
        assert!(
            err.contains("a.txt differs") && err.contains("line 2"),
            "{err}"
        );
        let missing = tree(&[("a.txt", "one\ntwo\n")]);
        assert!(match_expected(expected.path(), missing.path())
            .unwrap_err()
            .contains("sub/b.txt is missing"));
    }

    #[test]
    fn contains_and_lacks_fail_the_other_way_round() {
        let ws = tree(&[("f.py", "print('hi')\n")]);
        assert!(contains(ws.path(), "f.py", "print", true).is_ok());
        assert!(contains(ws.path(), "f.py", "exit", true).is_err());
        assert!(contains(ws.path(), "f.py", "print", false).is_err());
        assert!(contains(ws.path(), "f.py", "exit", false).is_ok());
        assert!(contains(ws.path(), "nope.py", "x", false).is_err());
    }

    #[test]
    fn matches_fails_without_a_match() {
        let ws = tree(&[("v.txt", "version = 1.2.3\n")]);
        assert!(matches(ws.path(), "v.txt", r"version = \d+\.\d+\.\d+").is_ok());
        assert!(matches(ws.path(), "v.txt", r"version = 2").is_err());
    }

    #[test]
    fn absent_fails_when_a_file_or_directory_is_there() {
        let ws = tree(&[("dir/f.txt", "x")]);
        assert!(absent(ws.path(), "g.txt").is_ok());
        assert!(absent(ws.path(), "dir/f.txt").is_err());
        assert!(absent(ws.path(), "dir").is_err());
    }

    #[test]
    fn unchanged_fails_on_an_edit_or_a_removal() {
        let input = tree(&[("keep.txt", "same")]);
        let same = tree(&[("keep.txt", "same")]);
        let edited = tree(&[("keep.txt", "same!")]);
        let gone = tree(&[]);
        assert!(unchanged(input.path(), same.path(), "keep.txt").is_ok());
        assert!(unchanged(input.path(), edited.path(), "keep.txt").is_err());
        assert!(unchanged(input.path(), gone.path(), "keep.txt").is_err());
    }
}
