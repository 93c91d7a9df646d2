//! Workspace facts found before the first turn: manifests and package managers,
//! instruction files, the build and test commands they imply, and what kinds of files
//! the workspace holds (so a search's glob names files that exist).

use std::collections::BTreeMap;
use std::path::Path;

/// How a fact introduces the commands a manifest implies.
const COMMANDS: &str = "likely commands: ";

/// The commands `facts` say the workspace's manifests imply (`cargo test`).
pub(crate) fn likely_commands(facts: &[String]) -> Vec<&str> {
    facts
        .iter()
        .filter_map(|fact| fact.split_once(COMMANDS))
        .flat_map(|(_, commands)| commands.split(", "))
        .collect()
}

/// What the workspace root says about the project in it, and (`with_files`) where its
/// files are.
pub fn detect(root: &Path, with_files: bool) -> Vec<String> {
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
            facts.push(format!("{file}: {what}; {COMMANDS}{}", commands.join(", ")));
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
    if let Some(files) = file_list(root).filter(|_| with_files) {
        facts.push(files);
    }
    facts
}

/// Files named at most in the list of a small workspace; a larger one is shown by its
/// top level.
const LISTED_FILES: usize = 30;

/// Directories no list or count looks into: version control, build output, caches.
fn skipped(name: &str) -> bool {
    matches!(
        name,
        ".git" | ".hg" | ".svn" | ".rein" | ".venv" | "target" | "node_modules" | "__pycache__"
    )
}

/// Where the workspace's files are, so a model names real paths from its first call
/// (a small model otherwise guesses `workspace/`, `src/main.py`): every file of a small
/// workspace, breadth first and sorted, with hidden ones, large ones and special files
/// marked (`.config/service.env (hidden)`, `data/events.log (2.4 MiB)`, `logs/live.pipe
/// (not a regular file)`); for a larger one, its top-level entries.
fn file_list(root: &Path) -> Option<String> {
    let mut files = Vec::new();
    let mut pending = std::collections::VecDeque::from([(root.to_path_buf(), String::new())]);
    while let Some((dir, prefix)) = pending.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if skipped(&name) {
                continue;
            }
            let path = format!("{prefix}{name}");
            let Ok(metadata) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if metadata.is_dir() {
                pending.push_back((entry.path(), format!("{path}/")));
                continue;
            }
            let mut shown = path.clone();
            if path.split('/').any(|part| part.starts_with('.')) {
                shown.push_str(" (hidden)");
            }
            if !metadata.is_file() {
                shown.push_str(" (not a regular file)");
            } else if metadata.len() >= LARGE_FILE {
                shown.push_str(&format!(" ({})", size_text(metadata.len())));
            }
            files.push(shown);
            if files.len() > LISTED_FILES {
                return top_level(root);
            }
        }
    }
    (!files.is_empty()).then(|| format!("files: {}", files.join(", ")))
}

/// Files this large have their size next to their name.
const LARGE_FILE: u64 = 100 * 1024;

/// `2.4 MiB`, `512 KiB`.
fn size_text(bytes: u64) -> String {
    match bytes >= 1024 * 1024 {
        true => format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0)),
        false => format!("{} KiB", bytes / 1024),
    }
}

/// `top level: src/, tests/, Cargo.toml, README.md` (directories first, at most 30).
fn top_level(root: &Path) -> Option<String> {
    let mut entries: Vec<(bool, String)> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let dir = entry.file_type().ok()?.is_dir();
            (!skipped(&name)).then_some((!dir, if dir { format!("{name}/") } else { name }))
        })
        .collect();
    entries.sort();
    let shown: Vec<String> = entries
        .iter()
        .take(LISTED_FILES)
        .map(|(_, name)| name.clone())
        .collect();
    let more = match entries.len() > LISTED_FILES {
        true => format!(" and {} more", entries.len() - LISTED_FILES),
        false => String::new(),
    };
    (!shown.is_empty()).then(|| format!("top level: {}{more}", shown.join(", ")))
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
            if name.starts_with('.') || skipped(&name) {
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
        assert!(detect(dir.path(), true).is_empty());
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "be careful").unwrap();
        std::fs::create_dir(dir.path().join("go.mod")).unwrap(); // a directory, not a manifest
        assert_eq!(detect(dir.path(), false).len(), 3);
        let facts = detect(dir.path(), true);
        assert_eq!(facts.len(), 4, "{facts:?}");
        assert!(facts[0].contains("cargo test"));
        assert!(facts[1].starts_with("AGENTS.md"));
        assert_eq!(facts[2], "files by extension: 1 .md, 1 .toml");
        assert_eq!(facts[3], "files: AGENTS.md, Cargo.toml");
    }

    #[test]
    fn a_small_workspace_lists_its_files_and_a_large_one_its_top_level() {
        let dir = tempfile::tempdir().unwrap();
        for (file, size) in [
            ("store/accounts.py", 1),
            ("main.py", 1),
            (".config/service.env", 1),
            ("data/events.log", 300 * 1024),
            (".git/config", 1),
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x".repeat(size)).unwrap();
        }
        assert_eq!(
            file_list(dir.path()).as_deref(),
            Some("files: main.py, .config/service.env (hidden), data/events.log (300 KiB), store/accounts.py")
        );
        for n in 0..40 {
            std::fs::write(dir.path().join(format!("f{n:02}.txt")), "x").unwrap();
        }
        let top = file_list(dir.path()).unwrap();
        assert!(
            top.starts_with("top level: .config/, data/, store/, f00.txt, f01.txt"),
            "{top}"
        );
        assert!(top.ends_with(" and 14 more"), "{top}");
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
