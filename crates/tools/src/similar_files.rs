//! Files in the workspace whose names resemble a path that does not exist.

use std::path::Path;

use crate::workspace::Workspace;

/// Files visited at most when looking for similar names.
const MAX_FILES_VISITED: usize = 20_000;
/// Names less similar than this are not suggested.
const MIN_SIMILARITY: f64 = 0.5;

/// "`a`, `b`": the files of the workspace most like `missing` (at most three), for a
/// "did you mean …?"; `None` when none is.
pub(crate) fn did_you_mean(workspace: &Workspace, missing: &Path) -> Option<String> {
    let listed: Vec<String> = similar_files(workspace, missing, 3)
        .iter()
        .map(|candidate| format!("`{candidate}`"))
        .collect();
    (!listed.is_empty()).then(|| listed.join(", "))
}

/// Up to `count` files (display paths) whose names resemble the file name of
/// `missing`, most similar first: the same name in another case or directory, then
/// by edit distance. The walk respects `.gitignore` and skips hidden files.
pub(crate) fn similar_files(workspace: &Workspace, missing: &Path, count: usize) -> Vec<String> {
    let Some(wanted) = missing
        .file_name()
        .map(|name| name.to_string_lossy().to_lowercase())
    else {
        return Vec::new();
    };
    let wanted_relative = workspace.relative(missing).to_lowercase();
    let mut scored: Vec<(f64, String)> = ignore::WalkBuilder::new(workspace.root())
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .take(MAX_FILES_VISITED)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            let relative = workspace.relative(entry.path());
            let score = similarity(&wanted, &wanted_relative, &name, &relative.to_lowercase());
            (score >= MIN_SIMILARITY).then_some((score, relative))
        })
        .collect();
    scored.sort_by(|(a_score, a_path), (b_score, b_path)| {
        b_score
            .total_cmp(a_score)
            .then(a_path.len().cmp(&b_path.len()))
            .then(a_path.cmp(b_path))
    });
    scored
        .into_iter()
        .take(count)
        .map(|(_, path)| path)
        .collect()
}

/// Up to `count` other files (display paths, shortest first) with the same file name
/// as `path`, ignoring case: where a file about to be created may have been meant.
pub(crate) fn same_name_files(workspace: &Workspace, path: &Path, count: usize) -> Vec<String> {
    similar_files(workspace, path, count + 1)
        .into_iter()
        .filter(|found| {
            let found = Path::new(found);
            found
                .file_name()
                .map(|n| n.to_string_lossy().to_lowercase())
                == path.file_name().map(|n| n.to_string_lossy().to_lowercase())
                && workspace.root().join(found) != path
        })
        .take(count)
        .collect()
}

fn similarity(wanted: &str, wanted_relative: &str, name: &str, relative: &str) -> f64 {
    if relative == wanted_relative {
        return 3.0;
    }
    if name == wanted {
        return 2.0;
    }
    let stem = |text: &str| text.split('.').next().unwrap_or(text).to_string();
    let by_name = strsim::normalized_levenshtein(wanted, name);
    if stem(wanted) == stem(name) {
        return 1.0 + by_name;
    }
    by_name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::ToolLimits;
    use std::fs;

    #[test]
    fn suggests_names_by_case_directory_and_edit_distance() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        fs::write(dir.path().join("src/main.rs"), "").unwrap();
        fs::write(dir.path().join("src/deep/Config.toml"), "").unwrap();
        fs::write(dir.path().join("unrelated.md"), "").unwrap();
        let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
        let root = workspace.root().to_path_buf();

        assert_eq!(
            similar_files(&workspace, &root.join("src/mian.rs"), 3),
            ["src/main.rs"]
        );
        assert_eq!(
            similar_files(&workspace, &root.join("config.toml"), 3),
            ["src/deep/Config.toml"]
        );
        assert!(similar_files(&workspace, &root.join("zzzzzzzzzz.q"), 3).is_empty());
    }
}
