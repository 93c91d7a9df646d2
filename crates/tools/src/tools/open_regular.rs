//! Opening a file for reading without ever blocking: the file type is checked
//! before opening, and the open itself does not wait for a writer.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::file_kind::{read_refusal, with_regular_siblings, FileKind};

/// Why a file could not be opened as a regular file.
#[derive(Debug)]
pub(crate) enum OpenRefusal {
    /// It does not exist.
    Missing,
    /// It is not a regular file; the text says what it is and what to do.
    NotRegular(String),
    /// Any other error.
    Io(io::Error),
}

/// Stats `path` (without opening it), refuses anything but a regular file, then
/// opens it non-blocking and checks the opened file is still regular.
pub(crate) fn open_regular(path: &Path, shown: &str) -> Result<(File, Metadata), OpenRefusal> {
    let metadata = std::fs::metadata(path).map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => OpenRefusal::Missing,
        _ => OpenRefusal::Io(error),
    })?;
    refuse_unless_regular(&metadata, shown).map_err(|refusal| match refusal {
        OpenRefusal::NotRegular(text) if !metadata.is_dir() => {
            OpenRefusal::NotRegular(with_regular_siblings(text, path, shown))
        }
        other => other,
    })?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(OpenRefusal::Io)?;
    let opened = file.metadata().map_err(OpenRefusal::Io)?;
    refuse_unless_regular(&opened, shown)?;
    Ok((file, opened))
}

fn refuse_unless_regular(metadata: &Metadata, shown: &str) -> Result<(), OpenRefusal> {
    match read_refusal(FileKind::of(&metadata.file_type()), shown) {
        Some(refusal) => Err(OpenRefusal::NotRegular(refusal)),
        None => Ok(()),
    }
}
