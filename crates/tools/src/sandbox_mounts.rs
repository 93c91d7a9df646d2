//! A read-only view of the file system for the sandboxed shell: the command enters
//! its own user and mount namespaces, every mount becomes read-only and only the
//! workspace and the private temporary directory are mounted writable again.
//! Landlock does not govern a file's metadata (`chmod`, `chown`, `touch -d` on a file
//! that exists), a read-only mount does. Everything the child runs is prepared here,
//! in rein, so the child between `fork` and `exec` only makes system calls.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// The namespace steps for one command, with every string already built.
#[derive(Debug)]
pub(crate) struct ReadOnlyView {
    writable: Vec<CString>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl ReadOnlyView {
    /// The view that keeps `writable` (the workspace, the temporary directory)
    /// writable; `None` where this system lets no process make one (user namespaces
    /// disabled or restricted), checked once per process.
    pub(crate) fn new(writable: &[&Path]) -> Option<Self> {
        if !namespaces_work() {
            return None;
        }
        Self::build(writable)
    }

    fn build(writable: &[&Path]) -> Option<Self> {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Some(Self {
            writable: writable
                .iter()
                .map(|p| CString::new(p.as_os_str().as_bytes()).ok())
                .collect::<Option<_>>()?,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        })
    }

    /// Enters the namespaces and remounts. Meant for the child between `fork` and
    /// `exec`: system calls on prepared buffers only.
    pub(crate) fn enter(&self) -> io::Result<()> {
        // SAFETY: every pointer handed to the kernel points into buffers owned by
        // `self` or into static C strings, all alive for the duration of the calls.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for path in &self.writable {
                check(libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
            }
            set_read_only(c"/".as_ptr(), true)?;
            for path in &self.writable {
                set_read_only(path.as_ptr(), false)?;
            }
            // The working directory was entered before the remount and still lies on
            // the old, now read-only, mount: enter it again by its path.
            let mut cwd = [0 as libc::c_char; libc::PATH_MAX as usize];
            if !libc::getcwd(cwd.as_mut_ptr(), cwd.len()).is_null() {
                check(libc::chdir(cwd.as_ptr()))?;
            }
        }
        Ok(())
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `data` to the file at `path` (a `/proc` control file).
unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let written = libc::write(fd, data.as_ptr().cast(), data.len());
    libc::close(fd);
    if written == data.len() as isize {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the mount tree at `path` read-only (`true`) or writable again.
unsafe fn set_read_only(path: *const libc::c_char, read_only: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let result = libc::syscall(
        libc::SYS_mount_setattr,
        libc::AT_FDCWD,
        path,
        libc::AT_RECURSIVE as libc::c_uint,
        &attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    );
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether a child can enter the view here: tried once, on `/bin/true` with the
/// temporary directory writable.
fn namespaces_work() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let temp = std::env::temp_dir();
        let Some(view) = ReadOnlyView::build(&[temp.as_path()]) else {
            return false;
        };
        let mut command = std::process::Command::new("/bin/true");
        // SAFETY: `enter` only makes system calls on buffers `view` owns.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || view.enter());
        }
        let works = command.status().is_ok_and(|s| s.success());
        if !works {
            tracing::warn!(
                "user namespaces are not available, so the sandboxed shell cannot make the file system read-only: the metadata of files outside the workspace (chmod, touch) is not protected; Landlock still guards their contents and the network"
            );
        }
        works
    })
}
