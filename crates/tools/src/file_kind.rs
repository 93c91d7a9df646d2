//! What kind of filesystem object a path is, by file type, and the plain refusal
//! for kinds a tool cannot treat as a text file.

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;

/// The kind of a filesystem object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (seen only without following links).
    Symlink,
    /// A named pipe.
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything else.
    Other,
}

impl FileKind {
    /// The kind of this file type.
    pub fn of(file_type: &FileType) -> Self {
        if file_type.is_file() {
            Self::Regular
        } else if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_symlink() {
            Self::Symlink
        } else if file_type.is_fifo() {
            Self::Fifo
        } else if file_type.is_socket() {
            Self::Socket
        } else if file_type.is_char_device() {
            Self::CharDevice
        } else if file_type.is_block_device() {
            Self::BlockDevice
        } else {
            Self::Other
        }
    }

    /// A short noun phrase for listings.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Regular => "file",
            Self::Directory => "directory",
            Self::Symlink => "symbolic link",
            Self::Fifo => "named pipe (FIFO)",
            Self::Socket => "Unix socket",
            Self::CharDevice => "character device",
            Self::BlockDevice => "block device",
            Self::Other => "special file",
        }
    }
}

/// Why a file of this kind cannot be read as text, or `None` for regular files.
/// `shown` is the path as the model should see it.
pub(crate) fn read_refusal(kind: FileKind, shown: &str) -> Option<String> {
    let reason = match kind {
        FileKind::Regular | FileKind::Symlink => return None,
        FileKind::Directory => {
            return Some(format!(
                "`{shown}` is a directory; use list_dir to see its entries."
            ))
        }
        FileKind::Fifo => "reading it would block",
        FileKind::Socket => "it has no contents to read",
        FileKind::CharDevice | FileKind::BlockDevice => "reading it could block or never end",
        FileKind::Other => "it is not a regular file",
    };
    Some(format!(
        "`{shown}` is a {}; {reason}. Use shell with a timeout if you really need its data.",
        kind.noun()
    ))
}

/// `refusal` for the special file at `path` (shown as `shown`), with the regular files
/// next to it, at most five: a model sent to a named pipe most often wants the log
/// beside it.
pub(crate) fn with_regular_siblings(
    refusal: String,
    path: &std::path::Path,
    shown: &str,
) -> String {
    let Some(parent) = path.parent() else {
        return refusal;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return refusal;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.truncate(5);
    if names.is_empty() {
        return refusal;
    }
    let dir = std::path::Path::new(shown)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shown: Vec<String> = names
        .iter()
        .map(|name| match dir.is_empty() {
            true => format!("`{name}`"),
            false => format!("`{dir}/{name}`"),
        })
        .collect();
    format!("{refusal} Regular files next to it: {}.", shown.join(", "))
}

/// Why a file of this kind cannot be written or edited, or `None` for regular files.
pub(crate) fn write_refusal(kind: FileKind, shown: &str) -> Option<String> {
    match kind {
        FileKind::Regular | FileKind::Symlink => None,
        FileKind::Directory => Some(format!(
            "`{shown}` is a directory; give the path of a file (for example `{shown}/name.txt`)."
        )),
        other => Some(format!(
            "`{shown}` is a {}, not a regular file; it cannot be written as a text file. Choose another path, or use shell if you really mean to feed it data.",
            other.noun()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    fn kind_of(path: &std::path::Path) -> FileKind {
        FileKind::of(&std::fs::symlink_metadata(path).unwrap().file_type())
    }

    #[test]
    fn kinds_come_from_the_file_type() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let socket = dir.path().join("socket");
        let _listener = UnixListener::bind(&socket).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();

        assert_eq!(kind_of(&file), FileKind::Regular);
        assert_eq!(kind_of(dir.path()), FileKind::Directory);
        assert_eq!(kind_of(&fifo), FileKind::Fifo);
        assert_eq!(kind_of(&socket), FileKind::Socket);
        assert_eq!(kind_of(&link), FileKind::Symlink);
        assert_eq!(
            kind_of(std::path::Path::new("/dev/null")),
            FileKind::CharDevice
        );
    }

    #[test]
    fn devices_and_pipes_are_refused_with_a_plain_reason() {
        let fifo = read_refusal(FileKind::Fifo, "x").unwrap();
        assert_eq!(
            fifo,
            "`x` is a named pipe (FIFO); reading it would block. Use shell with a timeout if you really need its data."
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join("logs/deploy.log"), "v").unwrap();
        let told = with_regular_siblings(
            fifo.clone(),
            &dir.path().join("logs/live.pipe"),
            "logs/live.pipe",
        );
        assert_eq!(
            told,
            format!("{fifo} Regular files next to it: `logs/deploy.log`.")
        );
        let device = read_refusal(FileKind::CharDevice, "null").unwrap();
        assert!(
            device.starts_with("`null` is a character device;"),
            "{device}"
        );
        let block = read_refusal(FileKind::BlockDevice, "sda").unwrap();
        assert!(block.starts_with("`sda` is a block device;"), "{block}");
        assert!(read_refusal(FileKind::Directory, "src")
            .unwrap()
            .contains("list_dir"));
        assert_eq!(read_refusal(FileKind::Regular, "a"), None);
        assert!(write_refusal(FileKind::Socket, "s")
            .unwrap()
            .contains("Unix socket"));
        assert_eq!(write_refusal(FileKind::Regular, "a"), None);
    }
}
