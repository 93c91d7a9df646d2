//! Workspace facts found before the first turn: manifests and package managers,
//! instruction files, the build and test commands they imply, and what kinds of files
//! the workspace holds (so a search's glob names files that exist).

use std::collections::BTreeMap;
use std::path::Path;

/// What the workspace root says about the project in it.
pub fn detect(root: &Path) -> Vec<String> {
    let has = |name: &str| root.join(name).is_file();
    let mut facts = Vec::new();
    let manifests: [(&str, &str, &[&str]); 6] = [
        (
            "Cargo.toml",
            "a Rust project (cargo)",
            &["cargo build", "cargo test"],
        ),
        (
            "package.json",
            "a JavaScript/TypeScript project (npm)",
            &["npm install", "npm test"],
        ),
        (
            "pyproject.toml",
            "a Python project (pyproject.toml)",
            &["python3 -m pytest"],
        ),
        (
            "setup.py",
            "a Python project (setup.py)",
            &["python3 -m pytest"],
        ),
        (
            "go.mod",
            "a Go module",
            &["go build ./...", "go test ./..."],
        ),
        ("Makefile", "a Makefile", &["make", "make test"]),
    ];
    for (file, what, commands) in manifests {
        if has(file) {
            facts.push(format!(
                "{file}: {what}; likely commands: {}",
                commands.join(", ")
            ));
        }
    }
    if has("requirements.txt") {
        facts
            .push("requirements.txt: Python dependencies (pip install -r requirements.txt)".into());
    }
    for file in [
        "AGENTS.md",
        "CLAUDE.md",
        "CONTRIBUTING.md",
        "README.md",
        "README",
    ] {
        if has(file) {
            facts.push(format!(
                "{file}: instructions for this project; read it before changing things"
            ));
        }
    }
    if let Some(kinds) = file_kinds(root) {
        facts.push(kinds);
    }
    facts
}

/// Files looked at, at most, to count the kinds of files.
const COUNTED_FILES: usize = 2_000;

/// `"files by extension: 3 .py, 1 .md, 1 .csv"`, counted in a bounded walk that skips
/// hidden and build directories; `None` for an empty workspace.
fn file_kinds(root: &Path) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = 0;
    let mut pending = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.')
                || matches!(name.as_str(), "target" | "node_modules" | "__pycache__")
            {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < 6 {
                pending.push((entry.path(), depth + 1));
            } else if kind.is_file() {
                seen += 1;
                let extension = Path::new(&name)
                    .extension()
                    .map(|e| format!(".{}", e.to_string_lossy()))
                    .unwrap_or_else(|| "no extension".into());
                *counts.entry(extension).or_default() += 1;
                if seen >= COUNTED_FILES {
                    pending.clear();
                    break;
                }
            }
        }
    }
    if counts.is_empty() {
        return None;
    }
    let mut kinds: Vec<(String, usize)> = counts.into_iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let listed: Vec<String> = kinds
        .iter()
        .take(8)
        .map(|(extension, count)| format!("{count} {extension}"))
        .collect();
    let more = if seen >= COUNTED_FILES {
        " (at least)"
    } else {
        ""
    };
    Some(format!("files by extension{more}: {}", listed.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_and_instruction_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(detect(dir.path()).is_empty());
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "be careful").unwrap();
        std::fs::create_dir(dir.path().join("go.mod")).unwrap(); // a directory, not a manifest
        let facts = detect(dir.path());
        assert_eq!(facts.len(), 3, "{facts:?}");
        assert!(facts[0].contains("cargo test"));
        assert!(facts[1].starts_with("AGENTS.md"));
        assert_eq!(facts[2], "files by extension: 1 .md, 1 .toml");
    }

    #[test]
    fn the_kinds_of_files_are_counted_without_hidden_or_build_directories() {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "src/a.py",
            "src/b.py",
            "lib/c.py",
            "notes.md",
            "target/x.rs",
            ".git/config",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        assert_eq!(
            file_kinds(dir.path()).as_deref(),
            Some("files by extension: 3 .py, 1 .md")
        );
    }
}
