//! `write_file`: atomic creation and replacement, and refusals.

use std::fs;
use std::os::unix::fs::FileTypeExt;

use rein_tools::{Access, Tool, WriteFile};
use serde_json::json;

use crate::support::{call, mkfifo, workspace, write};

#[test]
fn creates_a_file_with_its_parent_directories() {
    let (_dir, workspace) = workspace();
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "src/deep/new.rs", "content": "fn a() {}\nfn b() {}\n"}),
    );
    assert!(outcome.ok, "{}", outcome.text);
    assert_eq!(
        outcome.text,
        "Created `src/deep/new.rs` (20 bytes, 2 lines), with its parent directories."
    );
    let path = workspace.root().join("src/deep/new.rs");
    assert_eq!(outcome.changed_files, std::slice::from_ref(&path));
    assert_eq!(fs::read_to_string(path).unwrap(), "fn a() {}\nfn b() {}\n");
}

#[test]
fn a_new_file_named_like_existing_ones_says_where_they_are() {
    let (_dir, workspace) = workspace();
    write(&workspace, "services/auth/VERSION", "1.0.0\n");
    write(&workspace, "services/billing/VERSION", "1.0.2\n");
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "services/VERSION", "content": "1.1.0"}),
    );
    assert!(outcome.ok);
    assert!(
        outcome.text.starts_with(
            "Created `services/VERSION` (5 bytes, 1 line). It is a new file; files with the same name already exist: `services/auth/VERSION`, `services/billing/VERSION`."
        ),
        "{}",
        outcome.text
    );
    // Replacing one of them, or creating a name nobody has, says nothing more.
    let replaced = call(
        &WriteFile,
        &workspace,
        json!({"path": "services/auth/VERSION", "content": "1.1.0"}),
    );
    assert!(!replaced.text.contains("same name"), "{}", replaced.text);
    let fresh = call(
        &WriteFile,
        &workspace,
        json!({"path": "services/CHANGES", "content": "x"}),
    );
    assert!(!fresh.text.contains("same name"), "{}", fresh.text);
}

#[test]
fn replaces_a_file_atomically_and_says_what_it_had() {
    let (_dir, workspace) = workspace();
    write(&workspace, "a.txt", "old\n");
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "a.txt", "content": "new content"}),
    );
    assert!(outcome.ok);
    assert_eq!(
        outcome.text,
        "Replaced `a.txt` (11 bytes, 1 line; it had 4 bytes, 1 line): its only line is gone (`old`); 1 line added."
    );
    assert_eq!(
        fs::read_to_string(workspace.root().join("a.txt")).unwrap(),
        "new content"
    );
    let names: Vec<String> = fs::read_dir(workspace.root())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.txt"], "no temporary file is left behind");
}

#[test]
fn identical_content_changes_nothing() {
    let (_dir, workspace) = workspace();
    write(&workspace, "same.txt", "x\n");
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "same.txt", "content": "x\n"}),
    );
    assert!(outcome.ok);
    assert!(outcome.changed_files.is_empty());
    assert_eq!(
        outcome.text,
        "No change: `same.txt` already has exactly this content."
    );
}

#[test]
fn a_directory_or_a_fifo_is_not_overwritten() {
    let (_dir, workspace) = workspace();
    fs::create_dir(workspace.root().join("dir")).unwrap();
    let on_directory = call(
        &WriteFile,
        &workspace,
        json!({"path": "dir", "content": "x"}),
    );
    assert!(!on_directory.ok);
    assert!(
        on_directory
            .text
            .contains("is a directory; give the path of a file"),
        "{}",
        on_directory.text
    );

    let fifo = workspace.root().join("pipe");
    mkfifo(&fifo);
    let on_fifo = call(
        &WriteFile,
        &workspace,
        json!({"path": "pipe", "content": "x"}),
    );
    assert!(!on_fifo.ok);
    assert!(
        on_fifo
            .text
            .contains("named pipe (FIFO), not a regular file"),
        "{}",
        on_fifo.text
    );
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_parent_that_is_a_file_is_reported() {
    let (_dir, workspace) = workspace();
    write(&workspace, "plain", "x");
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "plain/child.txt", "content": "y"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("cannot create the directory for `plain/child.txt`"),
        "{}",
        outcome.text
    );
}

#[test]
fn missing_content_is_named_and_access_is_a_write() {
    let (_dir, workspace) = workspace();
    let outcome = call(&WriteFile, &workspace, json!({"path": "a.txt"}));
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .contains("missing required parameter `content`"),
        "{}",
        outcome.text
    );
    assert_eq!(
        WriteFile.access(&json!({"path": "a.txt", "content": ""}), &workspace),
        Access::Write(vec![workspace.root().join("a.txt")])
    );
    assert!(WriteFile.is_source_edit());
}

#[test]
fn search_output_for_the_same_file_does_not_replace_it() {
    let (dir, workspace) = workspace();
    let original = "# Guide\n\nTo recieve updates, subscribe to the channel.\n";
    write(&workspace, "docs/guide.md", original);
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "docs/guide.md", "content": "docs/guide.md:3: To recieve updates, subscribe to the channel.\n"}),
    );
    assert!(!outcome.ok, "{}", outcome.text);
    assert!(outcome.text.contains("edit_file"), "{}", outcome.text);
    assert_eq!(
        fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        original
    );
    // The corrected text itself is written.
    let fixed = "# Guide\n\nTo receive updates, subscribe to the channel.\n";
    let outcome = call(
        &WriteFile,
        &workspace,
        json!({"path": "docs/guide.md", "content": fixed}),
    );
    assert!(outcome.ok, "{}", outcome.text);
    assert_eq!(
        fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        fixed
    );
}
