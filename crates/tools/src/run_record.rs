//! What a run changed in its workspace, kept so `rein undo` can put it back. Before the
//! run every file's content is saved once by its digest (what git ignores, and `.git`
//! itself, is left out, as the tools leave it out); after the run the files that differ
//! are recorded with their states before and after, and the saved content of every other
//! file is dropped. Undo restores each changed file unless it changed again since.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::atomic_write::write_atomically;

/// The record's file in its directory.
const RECORD_FILE: &str = "record.json";
/// Saved contents, by digest.
const BLOBS: &str = "blobs";
/// A file larger than this is recorded without its content.
const MAX_SAVED_FILE: u64 = 64 << 20;
/// Contents saved per run at most; files beyond it are recorded without their content.
const MAX_SAVED_TOTAL: u64 = 512 << 20;

/// Why a record could not be made, read or applied.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A file-system error, with the path it concerned.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The record file does not parse.
    #[error("{0} is not a run record: {1}")]
    Corrupt(PathBuf, String),
    /// The record was applied already.
    #[error("this run was undone already")]
    AlreadyUndone,
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> RecordError {
    let path = path.to_path_buf();
    move |source| RecordError::Io {
        action,
        path,
        source,
    }
}

/// A file's state: its digest, size and permission bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    /// sha256 of the content, hex.
    pub sha256: String,
    /// Bytes.
    pub size: u64,
    /// Unix permission bits (0 where there are none).
    pub mode: u32,
}

/// One file the run created, changed or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Relative to the workspace, with `/`.
    pub path: String,
    /// Before the run (`None`: the run created it).
    pub before: Option<FileState>,
    /// After the run (`None`: the run deleted it).
    pub after: Option<FileState>,
    /// The content before the run is saved in the record.
    pub saved: bool,
}

/// What a run changed, as written to its record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The workspace's directory.
    pub workspace: PathBuf,
    /// The files that differ after the run.
    pub changes: Vec<Change>,
    /// Directories that existed before the run.
    pub directories: BTreeSet<String>,
    /// The record was applied by an undo.
    #[serde(default)]
    pub undone: bool,
}

impl RunRecord {
    /// Reads the record in `dir`.
    pub fn read(dir: &Path) -> Result<Self, RecordError> {
        let path = dir.join(RECORD_FILE);
        let text = std::fs::read_to_string(&path).map_err(io("reading", &path))?;
        serde_json::from_str(&text).map_err(|e| RecordError::Corrupt(path, e.to_string()))
    }

    fn write(&self, dir: &Path) -> Result<(), RecordError> {
        let path = dir.join(RECORD_FILE);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| RecordError::Corrupt(path.clone(), e.to_string()))?;
        write_atomically(&path, text.as_bytes()).map_err(io("writing", &path))
    }
}

/// The workspace as it was when a run started, with the contents saved.
#[derive(Debug)]
pub struct RunRecorder {
    root: PathBuf,
    dir: PathBuf,
    before: BTreeMap<String, (FileState, bool)>,
    directories: BTreeSet<String>,
}

impl RunRecorder {
    /// Saves the state and content of every file of the workspace `root` into the
    /// record directory `dir` (created).
    pub fn start(root: &Path, dir: &Path) -> Result<Self, RecordError> {
        let blobs = dir.join(BLOBS);
        std::fs::create_dir_all(&blobs).map_err(io("creating", &blobs))?;
        let (files, directories) = walk(root);
        let mut before = BTreeMap::new();
        let mut saved_total = 0u64;
        for (relative, path) in files {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let size = meta.len();
            let fits = size <= MAX_SAVED_FILE && saved_total + size <= MAX_SAVED_TOTAL;
            let (state, saved) = if fits {
                // One read gives both the digest and the saved copy.
                let Ok(content) = std::fs::read(&path) else {
                    continue;
                };
                let state = FileState {
                    sha256: hex(Sha256::digest(&content)),
                    size: content.len() as u64,
                    mode: mode_of(&meta),
                };
                let blob = blobs.join(&state.sha256);
                let saved = blob.is_file() || write_atomically(&blob, &content).is_ok();
                (state, saved)
            } else {
                let Some(state) = file_state(&path) else {
                    continue;
                };
                (state, false)
            };
            if saved {
                saved_total += state.size;
            }
            before.insert(relative, (state, saved));
        }
        Ok(Self {
            root: root.to_path_buf(),
            dir: dir.to_path_buf(),
            before,
            directories,
        })
    }

    /// Compares the workspace with its state at the start, writes the record of what
    /// differs, and drops the saved content nothing needs.
    pub fn finish(self) -> Result<RunRecord, RecordError> {
        let (files, _) = walk(&self.root);
        let mut after: BTreeMap<String, FileState> = BTreeMap::new();
        for (relative, path) in files {
            if let Some(state) = file_state(&path) {
                after.insert(relative, state);
            }
        }
        let mut changes = Vec::new();
        let paths: BTreeSet<&String> = self.before.keys().chain(after.keys()).collect();
        for path in paths {
            let before = self.before.get(path);
            let now = after.get(path);
            if before.map(|(state, _)| state) == now {
                continue;
            }
            changes.push(Change {
                path: path.clone(),
                before: before.map(|(state, _)| state.clone()),
                after: now.cloned(),
                saved: before.is_some_and(|(_, saved)| *saved),
            });
        }
        let needed: BTreeSet<&str> = changes
            .iter()
            .filter_map(|c| c.before.as_ref().map(|s| s.sha256.as_str()))
            .collect();
        let blobs = self.dir.join(BLOBS);
        if let Ok(entries) = std::fs::read_dir(&blobs) {
            for entry in entries.flatten() {
                if !needed.contains(entry.file_name().to_string_lossy().as_ref()) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let record = RunRecord {
            workspace: self.root,
            changes,
            directories: self.directories,
            undone: false,
        };
        record.write(&self.dir)?;
        Ok(record)
    }
}

/// What an undo did, file by file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct UndoReport {
    /// Put back as they were before the run (changed or deleted by it).
    pub restored: Vec<String>,
    /// Removed (the run created them).
    pub removed: Vec<String>,
    /// Left alone, with why: changed again since the run, or no saved content.
    pub refused: Vec<(String, String)>,
}

/// Puts the workspace of the record in `dir` back as it was before the run, file by
/// file; a file that changed again since the run is left alone and reported.
pub fn undo(dir: &Path) -> Result<UndoReport, RecordError> {
    let mut record = RunRecord::read(dir)?;
    if record.undone {
        return Err(RecordError::AlreadyUndone);
    }
    let mut report = UndoReport::default();
    for change in &record.changes {
        let path = record.workspace.join(&change.path);
        let now = file_state(&path);
        if now != change.after {
            report.refused.push((
                change.path.clone(),
                "changed again since the run".to_string(),
            ));
            continue;
        }
        match &change.before {
            None => {
                std::fs::remove_file(&path).map_err(io("removing", &path))?;
                report.removed.push(change.path.clone());
            }
            Some(_) if !change.saved => report.refused.push((
                change.path.clone(),
                "its content before the run was too large to keep".to_string(),
            )),
            Some(state) => {
                let blob = dir.join(BLOBS).join(&state.sha256);
                let content = std::fs::read(&blob).map_err(io("reading", &blob))?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
                }
                write_atomically(&path, &content).map_err(io("writing", &path))?;
                set_mode(&path, state.mode);
                report.restored.push(change.path.clone());
            }
        }
    }
    remove_new_empty_directories(&record);
    record.undone = true;
    record.write(dir)?;
    Ok(report)
}

/// Removes the directories the run created that are empty once its files are gone,
/// deepest first.
fn remove_new_empty_directories(record: &RunRecord) {
    let mut created: BTreeSet<String> = BTreeSet::new();
    for change in record.changes.iter().filter(|c| c.before.is_none()) {
        let mut parent = Path::new(&change.path).parent();
        while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            let name = slash_path(dir);
            if record.directories.contains(&name) {
                break;
            }
            created.insert(name);
            parent = dir.parent();
        }
    }
    let mut deepest_first: Vec<String> = created.into_iter().collect();
    deepest_first.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for dir in deepest_first {
        // Only empty directories go; anything else written there since stays.
        let _ = std::fs::remove_dir(record.workspace.join(dir));
    }
}

/// The regular files and directories of the workspace, relative, as the tools see it.
fn walk(root: &Path) -> (Vec<(String, PathBuf)>, BTreeSet<String>) {
    let mut files = Vec::new();
    let mut directories = BTreeSet::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        match entry.file_type() {
            Some(kind) if kind.is_file() => {
                files.push((slash_path(relative), entry.path().to_path_buf()))
            }
            Some(kind) if kind.is_dir() => {
                directories.insert(slash_path(relative));
            }
            _ => {}
        }
    }
    (files, directories)
}

fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The state of the regular file at `path`, `None` when there is none.
fn file_state(path: &Path) -> Option<FileState> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    let size = std::io::copy(&mut file, &mut hasher).ok()?;
    Some(FileState {
        sha256: hex(hasher.finalize()),
        size,
        mode: mode_of(&meta),
    })
}

/// A digest as lower-case hex.
fn hex(digest: impl AsRef<[u8]>) -> String {
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_meta: &std::fs::Metadata) -> u32 {
    0
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    if mode != 0 {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
    }
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(root: &Path, path: &str) -> Option<String> {
        std::fs::read_to_string(root.join(path)).ok()
    }

    #[test]
    fn undo_puts_back_what_a_run_created_changed_and_deleted() {
        let workspace = tempfile::tempdir().unwrap();
        let records = tempfile::tempdir().unwrap();
        let root = workspace.path();
        write(root, "src/main.py", "print('one')\n");
        write(root, "notes/old.md", "# Old\n");
        write(root, "same.txt", "untouched\n");
        write(root, ".env", "KEY=1\n");
        let recorder = RunRecorder::start(root, records.path()).unwrap();

        // What a run might do, by tools or by shell commands.
        write(root, "src/main.py", "print('two')\n");
        std::fs::remove_file(root.join("notes/old.md")).unwrap();
        write(root, "out/deep/report.txt", "made\n");
        write(root, ".env", "KEY=2\n");
        let record = recorder.finish().unwrap();
        let changed: Vec<&str> = record.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            changed,
            [".env", "notes/old.md", "out/deep/report.txt", "src/main.py"]
        );
        let blobs = std::fs::read_dir(records.path().join(BLOBS))
            .unwrap()
            .count();
        assert_eq!(blobs, 3, "only the pre-images of changed files are kept");

        let report = undo(records.path()).unwrap();
        assert_eq!(report.removed, ["out/deep/report.txt"]);
        assert_eq!(report.restored, [".env", "notes/old.md", "src/main.py"]);
        assert!(report.refused.is_empty());
        assert_eq!(read(root, "src/main.py").as_deref(), Some("print('one')\n"));
        assert_eq!(read(root, "notes/old.md").as_deref(), Some("# Old\n"));
        assert_eq!(read(root, ".env").as_deref(), Some("KEY=1\n"));
        assert_eq!(read(root, "same.txt").as_deref(), Some("untouched\n"));
        assert!(
            !root.join("out").exists(),
            "directories the run made go too"
        );
        assert!(matches!(
            undo(records.path()),
            Err(RecordError::AlreadyUndone)
        ));
    }

    #[test]
    fn a_file_changed_again_since_the_run_is_left_alone() {
        let workspace = tempfile::tempdir().unwrap();
        let records = tempfile::tempdir().unwrap();
        let root = workspace.path();
        write(root, "a.txt", "before\n");
        write(root, "b.txt", "before\n");
        let recorder = RunRecorder::start(root, records.path()).unwrap();
        write(root, "a.txt", "by the run\n");
        write(root, "b.txt", "by the run\n");
        recorder.finish().unwrap();
        write(root, "a.txt", "by the user afterwards\n");

        let report = undo(records.path()).unwrap();
        assert_eq!(report.restored, ["b.txt"]);
        assert_eq!(
            report.refused,
            [(
                "a.txt".to_string(),
                "changed again since the run".to_string()
            )]
        );
        assert_eq!(
            read(root, "a.txt").as_deref(),
            Some("by the user afterwards\n")
        );
        assert_eq!(read(root, "b.txt").as_deref(), Some("before\n"));
    }

    #[cfg(unix)]
    #[test]
    fn permissions_come_back_with_the_content() {
        use std::os::unix::fs::PermissionsExt;
        let workspace = tempfile::tempdir().unwrap();
        let records = tempfile::tempdir().unwrap();
        let root = workspace.path();
        write(root, "run.sh", "echo one\n");
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let recorder = RunRecorder::start(root, records.path()).unwrap();
        std::fs::remove_file(root.join("run.sh")).unwrap();
        recorder.finish().unwrap();
        undo(records.path()).unwrap();
        let mode = std::fs::metadata(root.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}
