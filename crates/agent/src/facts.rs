//! Workspace facts found before the first turn: manifests and package managers,
//! instruction files, and the build and test commands they imply.

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
    facts
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
        assert_eq!(facts.len(), 2, "{facts:?}");
        assert!(facts[0].contains("cargo test"));
        assert!(facts[1].starts_with("AGENTS.md"));
    }
}
