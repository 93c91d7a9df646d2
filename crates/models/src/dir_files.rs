//! The files of a directory as the caches and pulls look at them: those directly in it
//! with one extension, and every file below it (links to files followed, links to
//! directories not, so no walk loops).

use std::path::{Path, PathBuf};

/// The regular files directly in `dir` whose extension is `extension`, by name.
pub(crate) fn with_extension(dir: &Path, extension: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    Ok(files)
}

/// Every regular file below `dir` (none when it cannot be read).
pub(crate) fn below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    files
}

/// The bytes of `files` (a file that cannot be read counts 0).
pub(crate) fn total_bytes(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|file| std::fs::metadata(file).ok())
        .map(|meta| meta.len())
        .sum()
}
