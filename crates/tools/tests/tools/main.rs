//! Integration tests of the built-in tools on real files, pipes, sockets and
//! processes in temporary directories.

mod confinement;
mod edit_file;
mod list_dir;
mod read_file;
mod registry;
#[cfg(target_os = "linux")]
mod sandbox;
mod search;
mod shell;
mod support;
mod write_file;
