//! `rein eval todo-workspace`: writes the generated workspace of one seed for the
//! README's first job (TODO comments in other languages and layouts) and the lists its
//! grading reads, so `scripts/demo.sh --generated SEED` runs the same job on it.

use std::path::Path;

use anyhow::Context;
use rein_eval::generate;

/// Writes the workspace of `seed` into `dir` (which must be empty or absent), the
/// `path:line` of every TODO comment to `expected` and those of other markers to
/// `absent`, one per line.
pub fn write(seed: u64, dir: &Path, expected: &Path, absent: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).with_context(|| dir.display().to_string())?;
        anyhow::ensure!(
            entries.next().is_none(),
            "{} is not empty; the workspace goes into an empty or new directory",
            dir.display()
        );
    }
    let workspace = generate::todo_workspace(seed);
    for (path, content) in &workspace.files {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).with_context(|| parent.display().to_string())?;
        }
        rein_tools::write_atomically(&file, content.as_bytes())
            .with_context(|| file.display().to_string())?;
    }
    for (file, lines) in [
        (expected, &workspace.expected),
        (absent, &workspace.other_markers),
    ] {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        rein_tools::write_atomically(file, text.as_bytes())
            .with_context(|| file.display().to_string())?;
    }
    Ok(())
}
