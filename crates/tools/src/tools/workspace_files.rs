//! The regular files below a directory, in name order, as the tools walk them: what
//! git ignores is left out, and at most a given number of entries is visited.

use std::path::Path;

/// The regular files below `root` in name order, visiting at most `visited` entries.
pub(super) fn files_under(root: &Path, visited: usize) -> impl Iterator<Item = ignore::DirEntry> {
    ignore::WalkBuilder::new(root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .filter_map(Result::ok)
        .take(visited)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
}
