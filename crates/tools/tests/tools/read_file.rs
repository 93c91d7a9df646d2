//! `read_file`: windows, budgets, re-reads, and refusals of what is not a text file.

use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use rein_tools::{Access, ReadFile, Tool, ToolLimits};
use serde_json::json;

use crate::support::{call, call_within, mkfifo, workspace, workspace_with, write};

#[test]
fn lines_are_numbered_and_the_reply_says_where_to_continue() {
    let (_dir, workspace) = workspace();
    let content: String = (1..=5000)
        .map(|number| format!("line {number}\n"))
        .collect();
    write(&workspace, "a.txt", &content);

    let first = call(&ReadFile, &workspace, json!({"path": "a.txt"}));
    assert!(first.ok);
    assert!(
        first.text.starts_with("   1| line 1\n   2| line 2\n"),
        "{}",
        first.text
    );
    assert!(first.text.contains(" 200| line 200\n"));
    assert!(!first.text.contains("line 201\n"));
    assert!(first.text.ends_with(
        "[lines 1-200 of 5000 shown; continue with read_file(path=\"a.txt\", offset=201)]"
    ));

    let last = call(
        &ReadFile,
        &workspace,
        json!({"path": "a.txt", "offset": 4990}),
    );
    assert!(last.text.starts_with("4990| line 4990\n"), "{}", last.text);
    assert!(
        last.text
            .ends_with("[lines 4990-5000 of 5000 shown; end of file]"),
        "{}",
        last.text
    );
}

#[test]
fn limit_and_a_short_file_need_no_footer() {
    let (_dir, workspace) = workspace();
    write(&workspace, "short.txt", "one\ntwo\nthree\n");
    let whole = call(&ReadFile, &workspace, json!({"path": "short.txt"}));
    assert_eq!(whole.text, "   1| one\n   2| two\n   3| three\n");
    let limited = call(
        &ReadFile,
        &workspace,
        json!({"path": "short.txt", "offset": 2, "limit": 1}),
    );
    assert_eq!(
        limited.text,
        "   2| two\n[line 2 of 3 shown; continue with read_file(path=\"short.txt\", offset=3)]"
    );
}

#[test]
fn the_character_budget_stops_at_a_line_boundary() {
    let limits = ToolLimits {
        read_chars: 25,
        ..ToolLimits::default()
    };
    let (_dir, workspace) = workspace_with(limits);
    write(&workspace, "b.txt", "0123456789\n0123456789\n0123456789\n");
    let outcome = call(&ReadFile, &workspace, json!({"path": "b.txt"}));
    assert!(
        outcome.text.contains("   2| 0123456789\n"),
        "{}",
        outcome.text
    );
    assert!(outcome
        .text
        .ends_with("[lines 1-2 of 3 shown; continue with read_file(path=\"b.txt\", offset=3)]"));
}

#[test]
fn a_huge_single_line_is_cut_and_continued_by_character() {
    let (_dir, workspace) = workspace();
    let line: String = "ab€".repeat(7000);
    write(&workspace, "one_line.txt", &line);

    let first = call(&ReadFile, &workspace, json!({"path": "one_line.txt"}));
    assert!(first.ok);
    assert!(first.text.ends_with(
        "[line 1, characters 0-8000 of 21000 shown; continue with read_file(path=\"one_line.txt\", offset=1, char_offset=8000)]"
    ), "{}", &first.text[first.text.len() - 300..]);

    workspace.forget_reads();
    let mut collected = String::new();
    let mut char_offset = 0;
    for _ in 0..5 {
        let outcome = call(
            &ReadFile,
            &workspace,
            json!({"path": "one_line.txt", "offset": 1, "char_offset": char_offset}),
        );
        let body = outcome.text.lines().next().unwrap();
        let body = body
            .trim_start_matches("   1| ")
            .trim_start_matches('…')
            .trim_end_matches('…');
        collected.push_str(body);
        match outcome.text.rsplit_once("char_offset=") {
            Some((_, rest)) => char_offset = rest.trim_end_matches(")]").parse().unwrap(),
            None => break,
        }
    }
    assert_eq!(collected, line);
}

#[test]
fn an_unchanged_range_is_not_repeated_until_the_file_changes() {
    let (_dir, workspace) = workspace();
    write(&workspace, "c.txt", "alpha\nbeta\ngamma\n");
    let first = call(&ReadFile, &workspace, json!({"path": "c.txt"}));
    assert!(first.text.contains("alpha"));

    let again = call(&ReadFile, &workspace, json!({"path": "c.txt"}));
    assert!(again.ok);
    assert_eq!(
        again.text,
        "You already read lines 1-3 of `c.txt` and it has not changed since; use what you read, or read another range."
    );

    let other_range = call(&ReadFile, &workspace, json!({"path": "c.txt", "offset": 2}));
    assert!(
        other_range.text.contains("   2| beta"),
        "{}",
        other_range.text
    );

    write(&workspace, "c.txt", "alpha\nbeta\ngamma\ndelta\n");
    let changed = call(&ReadFile, &workspace, json!({"path": "c.txt"}));
    assert!(changed.text.contains("   4| delta"), "{}", changed.text);

    workspace.forget_reads();
    let forgotten = call(&ReadFile, &workspace, json!({"path": "c.txt"}));
    assert!(forgotten.text.contains("   1| alpha"), "{}", forgotten.text);
}

#[test]
fn an_empty_file_says_so() {
    let (_dir, workspace) = workspace();
    write(&workspace, "empty.txt", "");
    let outcome = call(&ReadFile, &workspace, json!({"path": "empty.txt"}));
    assert!(outcome.ok);
    assert_eq!(outcome.text, "`empty.txt` is empty (0 bytes).");
}

#[test]
fn a_missing_file_suggests_similar_names() {
    let (_dir, workspace) = workspace();
    write(&workspace, "src/main.rs", "fn main() {}\n");
    write(&workspace, "src/Lib.rs", "\n");
    let outcome = call(&ReadFile, &workspace, json!({"path": "src/mian.rs"}));
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("`src/mian.rs` does not exist; did you mean `src/main.rs`"),
        "{}",
        outcome.text
    );
    let by_case = call(&ReadFile, &workspace, json!({"path": "lib.rs"}));
    assert!(by_case.text.contains("`src/Lib.rs`"), "{}", by_case.text);
    let nothing_like = call(&ReadFile, &workspace, json!({"path": "qqqqqqqq.zz"}));
    assert!(
        nothing_like.text.contains("Use list_dir"),
        "{}",
        nothing_like.text
    );
}

#[test]
fn a_fifo_without_a_writer_is_refused_promptly() {
    let (_dir, workspace) = workspace();
    mkfifo(&workspace.root().join("pipe"));
    let started = Instant::now();
    let outcome = call_within(
        ReadFile,
        workspace.root(),
        json!({"path": "pipe"}),
        Duration::from_secs(5),
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!outcome.ok);
    assert_eq!(
        outcome.text,
        "`pipe` is a named pipe (FIFO); reading it would block. Use shell with a timeout if you really need its data."
    );
}

#[test]
fn a_socket_is_refused() {
    let (_dir, workspace) = workspace();
    let _listener = UnixListener::bind(workspace.root().join("sock")).unwrap();
    let outcome = call_within(
        ReadFile,
        workspace.root(),
        json!({"path": "sock"}),
        Duration::from_secs(5),
    );
    assert!(!outcome.ok);
    assert!(
        outcome.text.starts_with("`sock` is a Unix socket;"),
        "{}",
        outcome.text
    );
}

#[test]
fn a_device_outside_the_workspace_is_refused_by_confinement() {
    let (_dir, workspace) = workspace();
    let outcome = call(&ReadFile, &workspace, json!({"path": "/dev/null"}));
    assert!(!outcome.ok);
    assert!(
        outcome.text.contains("is outside the workspace"),
        "{}",
        outcome.text
    );
}

#[test]
fn a_directory_read_as_a_file_shows_its_entries() {
    let (_dir, workspace) = workspace();
    std::fs::create_dir(workspace.root().join("src")).unwrap();
    std::fs::write(workspace.root().join("src/main.sh"), "echo hi\n").unwrap();
    let outcome = call(&ReadFile, &workspace, json!({"path": "src"}));
    assert!(outcome.ok);
    assert_eq!(
        outcome.text,
        "`src` is a directory, not a file; its entries, as list_dir shows them:\n`src` (1 entry):\n  main.sh  8 B"
    );
}

#[test]
fn a_binary_file_points_to_shell() {
    let (_dir, workspace) = workspace();
    std::fs::write(
        workspace.root().join("blob.bin"),
        [0x7f, b'E', b'L', b'F', 0, 1, 2, 3],
    )
    .unwrap();
    let outcome = call(&ReadFile, &workspace, json!({"path": "blob.bin"}));
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("`blob.bin` is a binary file (8 bytes); use shell"),
        "{}",
        outcome.text
    );
}

#[test]
fn offsets_past_the_end_say_how_long_the_file_is() {
    let (_dir, workspace) = workspace();
    write(&workspace, "d.txt", "a\nb\n");
    let outcome = call(&ReadFile, &workspace, json!({"path": "d.txt", "offset": 9}));
    assert!(!outcome.ok);
    assert_eq!(
        outcome.text,
        "`d.txt` has 2 lines; offset 9 is past the end. Read from an offset between 1 and 2."
    );
}

#[test]
fn missing_and_mistyped_arguments_name_the_parameter() {
    let (_dir, workspace) = workspace();
    let missing = call(&ReadFile, &workspace, json!({}));
    assert!(!missing.ok);
    assert!(
        missing.text.contains("missing required parameter `path`"),
        "{}",
        missing.text
    );
    let mistyped = call(
        &ReadFile,
        &workspace,
        json!({"path": "a", "offset": "first"}),
    );
    assert!(
        mistyped
            .text
            .contains("parameter `offset` must be a non-negative integer"),
        "{}",
        mistyped.text
    );
}

#[test]
fn access_is_a_read_of_the_resolved_path() {
    let (_dir, workspace) = workspace();
    assert_eq!(
        ReadFile.access(&json!({"path": "x/y.txt"}), &workspace),
        Access::Read(vec![workspace.root().join("x/y.txt")])
    );
    assert_eq!(
        ReadFile.access(&json!({"path": "../x"}), &workspace),
        Access::Read(vec![])
    );
    assert_eq!(
        ReadFile.access(&json!({}), &workspace),
        Access::Read(vec![])
    );
    assert!(!ReadFile.is_source_edit());
}
