//! `list_dir`: sorted entries with kinds, sizes and marks.

use rein_tools::{ListDir, ReadFile, ToolLimits};
use serde_json::json;

use crate::support::{call, mkfifo, workspace, workspace_with, write};

#[test]
fn entries_are_sorted_with_kinds_sizes_and_hidden_marks() {
    let (_dir, workspace) = workspace();
    write(&workspace, "b.txt", &"x".repeat(1536));
    write(&workspace, "a.txt", "hello");
    write(&workspace, "src/lib.rs", "");
    write(&workspace, ".env", "K=V\n");
    mkfifo(&workspace.root().join("pipe"));
    std::os::unix::fs::symlink("a.txt", workspace.root().join("link")).unwrap();
    std::os::unix::fs::symlink("/etc", workspace.root().join("etc_link")).unwrap();

    let outcome = call(&ListDir, &workspace, json!({}));
    assert!(outcome.ok);
    assert_eq!(
        outcome.text,
        "`.` (7 entries):\n  .env  4 B  (hidden)\n  a.txt  5 B\n  b.txt  1.5 KiB\n  etc_link -> /etc  (outside the workspace)\n  link -> a.txt\n  pipe  (named pipe (FIFO))\n  src/"
    );
}

#[test]
fn long_listings_are_capped_with_a_count_of_the_rest() {
    let limits = ToolLimits {
        list_entries: 3,
        ..ToolLimits::default()
    };
    let (_dir, workspace) = workspace_with(limits);
    for index in 0..10 {
        write(&workspace, &format!("dir/f{index}.txt"), "");
    }
    let outcome = call(&ListDir, &workspace, json!({"path": "dir"}));
    assert!(
        outcome
            .text
            .starts_with("`dir` (10 entries):\n  f0.txt  0 B\n  f1.txt  0 B\n  f2.txt  0 B\n"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.ends_with(
        "[7 more not shown; list a subdirectory, or use search with mode \"files\" to find a name]"
    ));
}

#[test]
fn a_file_is_shown_for_what_it_is_and_an_empty_directory_says_so() {
    let (_dir, workspace) = workspace();
    write(&workspace, "a.txt", "x");
    std::fs::create_dir(workspace.root().join("empty")).unwrap();
    // A short text file listed by mistake: its size and its text.
    let on_file = call(&ListDir, &workspace, json!({"path": "a.txt"}));
    assert!(on_file.ok);
    assert_eq!(
        on_file.text,
        "`a.txt` is a file (1 B), not a directory. What read_file shows of it:\n   1| x\n"
    );
    // Again, and then read: shown each time (a listing is not a read).
    let again = call(&ListDir, &workspace, json!({"path": "a.txt"}));
    assert_eq!(again.text, on_file.text);
    let read = call(&ReadFile, &workspace, json!({"path": "a.txt"}));
    assert_eq!(read.text, "   1| x\n");
    // A binary file: its size in bytes.
    std::fs::write(
        workspace.root().join("blob.bin"),
        [0u8, 159, 146, 150, 0, 1],
    )
    .unwrap();
    let binary = call(&ListDir, &workspace, json!({"path": "blob.bin"}));
    assert!(binary.ok);
    assert!(
        binary.text.starts_with(
            "`blob.bin` is a file (6 B), not a directory. `blob.bin` is a binary file (6 bytes)"
        ),
        "{}",
        binary.text
    );
    // A long one: its size and how to read it.
    write(&workspace, "big.log", &"line of a log\n".repeat(1000));
    let big = call(&ListDir, &workspace, json!({"path": "big.log"}));
    assert!(big.ok);
    assert_eq!(
        big.text,
        "`big.log` is a file (14000 bytes, 13.7 KiB), not a directory; read it with read_file (a page at a time) or search it."
    );
    std::fs::remove_file(workspace.root().join("blob.bin")).unwrap();
    std::fs::remove_file(workspace.root().join("big.log")).unwrap();
    let empty = call(&ListDir, &workspace, json!({"path": "empty"}));
    assert!(empty.ok);
    assert_eq!(empty.text, "`empty` is empty.");
    let missing = call(&ListDir, &workspace, json!({"path": "gone/away"}));
    assert!(!missing.ok);
    assert_eq!(
        missing.text,
        "`gone/away` does not exist. The nearest directory that does:\n`.` (2 entries):\n  a.txt  1 B\n  empty/"
    );
    let inside = call(&ListDir, &workspace, json!({"path": "empty/workspace"}));
    assert_eq!(
        inside.text,
        "`empty/workspace` does not exist. The nearest directory that does:\n`empty` is empty."
    );
}
