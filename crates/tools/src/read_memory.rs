//! Which file ranges `read_file` has shown, and the file's state when it did.

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::SystemTime;

/// One `read_file` request, with defaults applied.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ReadRequest {
    /// The resolved file.
    pub path: PathBuf,
    /// First line, 1-based.
    pub offset: usize,
    /// Lines asked for.
    pub limit: usize,
    /// Characters skipped in the first line.
    pub char_offset: usize,
}

/// A file's identity and state: any write (atomic writes replace the inode) changes
/// at least one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
    device: u64,
}

impl FileStamp {
    /// The stamp of a file's current metadata.
    pub fn of(metadata: &Metadata) -> Self {
        Self {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            inode: metadata.ino(),
            device: metadata.dev(),
        }
    }
}

/// The ranges shown so far, each with the stamp of the file when it was shown and a
/// description of what was shown (`lines 1-200`).
#[derive(Debug, Default)]
pub(crate) struct ReadMemory {
    shown: HashMap<ReadRequest, (FileStamp, String)>,
}

impl ReadMemory {
    /// What was shown for this request, if the file has not changed since.
    pub fn recall(&self, request: &ReadRequest, stamp: &FileStamp) -> Option<&str> {
        self.shown
            .get(request)
            .filter(|(shown_stamp, _)| shown_stamp == stamp)
            .map(|(_, shown)| shown.as_str())
    }

    /// Records that `shown` was shown for this request.
    pub fn remember(&mut self, request: ReadRequest, stamp: FileStamp, shown: String) {
        self.shown.insert(request, (stamp, shown));
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.shown.clear();
    }
}
