//! `edit_file`: one exact replacement, and helpful replies when it cannot be made.

use std::fs;
use std::time::Duration;

use rein_tools::{EditFile, Tool};
use serde_json::json;

use crate::support::{call, call_within, mkfifo, workspace, write};

const SOURCE: &str = "fn main() {\n    let total = 1;\n    println!(\"{total}\");\n}\n\nfn helper() {\n    let total = 1;\n}\n";

fn read(workspace: &rein_tools::Workspace, name: &str) -> String {
    fs::read_to_string(workspace.root().join(name)).unwrap()
}

#[test]
fn one_match_is_replaced_and_located() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "    println!(\"{total}\");", "new_string": "    println!(\"total: {total}\");\n    println!(\"done\");"}),
    );
    assert!(outcome.ok, "{}", outcome.text);
    assert!(
        outcome.text.starts_with(
            "Edited `main.rs` at line 3: replaced 1 line with 2 lines; the file now has 9 lines."
        ),
        "{}",
        outcome.text
    );
    assert!(
        outcome
            .text
            .contains("   3|     println!(\"total: {total}\");\n   4|     println!(\"done\");"),
        "{}",
        outcome.text
    );
    assert_eq!(outcome.changed_files, [workspace.root().join("main.rs")]);
    assert!(read(&workspace, "main.rs").contains("println!(\"done\");\n}\n"));
}

#[test]
fn an_edit_already_applied_needs_no_change() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "fn primary() {", "new_string": "fn helper() {"}),
    );
    assert!(outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("No change needed: the edit is already applied (line 6)"),
        "{}",
        outcome.text
    );
    // The line is shown, and the swap a small model makes is named.
    assert!(
        outcome.text.contains("Line 6 reads: `fn helper() {`.")
            && outcome.text.contains("the wrong way round"),
        "{}",
        outcome.text
    );
    assert!(outcome.changed_files.is_empty());
    // A rename made before: `calc` occurs only inside `calculate_total`, once or
    // more; replacing it would corrupt the name.
    let app = "def calculate_total(prices):\n    return sum(prices)\n\nprint(calculate_total([3, 4, 5]))\n";
    for (file, content) in [("app.py", app), ("one.py", "x = calculate_total\n")] {
        write(&workspace, file, content);
        let outcome = call(
            &EditFile,
            &workspace,
            json!({"path": file, "old_string": "calc", "new_string": "calculate_total"}),
        );
        assert!(outcome.ok, "{}", outcome.text);
        assert!(
            outcome
                .text
                .starts_with("No change needed: the edit looks applied already."),
            "{}",
            outcome.text
        );
        assert_eq!(read(&workspace, file), content);
    }
    // One occurrence outside new_string: still an edit to make (here ambiguous).
    write(&workspace, "mixed.py", "calc()\ncalculate_total()\n");
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "mixed.py", "old_string": "calc", "new_string": "calculate_total"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome.text.starts_with("old_string occurs 2 times"),
        "{}",
        outcome.text
    );
}

#[test]
fn several_matches_are_listed_and_nothing_changes() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "let total = 1;", "new_string": "let total = 2;"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("old_string occurs 2 times in `main.rs` (lines 2, 7):"),
        "{}",
        outcome.text
    );
    assert!(
        outcome
            .text
            .contains("  7 (in `fn helper() {`): let total = 1;"),
        "{}",
        outcome.text
    );
    assert_eq!(read(&workspace, "main.rs"), SOURCE);
}

#[test]
fn a_missing_string_offers_the_nearest_lines() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "fn helpr() -> u32 {", "new_string": "x"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .contains("The lines most like its first line are:\n  6: fn helper() {"),
        "{}",
        outcome.text
    );
    assert_eq!(read(&workspace, "main.rs"), SOURCE);
}

#[test]
fn identical_strings_are_refused_after_the_file_is_searched() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    // Not in the file: what the file has instead is the news.
    let absent = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "fn helpr() {", "new_string": "fn helpr() {"}),
    );
    assert!(!absent.ok);
    assert!(
        absent
            .text
            .contains("old_string was not found in `main.rs`")
            && absent.text.contains("6: fn helper() {"),
        "{}",
        absent.text
    );
    // In the file: the edit would change nothing.
    let present = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "fn helper() {", "new_string": "fn helper() {"}),
    );
    assert!(!present.ok);
    assert!(
        present
            .text
            .starts_with("old_string and new_string are identical"),
        "{}",
        present.text
    );
    assert_eq!(read(&workspace, "main.rs"), SOURCE);
}

#[test]
fn whitespace_differences_are_explained() {
    let (_dir, workspace) = workspace();
    write(&workspace, "tabs.go", "func a() {\n\treturn\n}\n");
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "tabs.go", "old_string": "func a() {\n    return\n}", "new_string": "func a() {}"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .contains("matches lines 1-3 if whitespace is ignored: the file indents with tabs"),
        "{}",
        outcome.text
    );
}

#[test]
fn a_case_difference_is_located() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "FN HELPER()", "new_string": "fn other()"}),
    );
    assert!(
        outcome.text.contains("matches ignoring case at line 6"),
        "{}",
        outcome.text
    );
}

#[test]
fn an_empty_old_string_points_to_write_file() {
    let (_dir, workspace) = workspace();
    write(&workspace, "main.rs", SOURCE);
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "main.rs", "old_string": "", "new_string": "x"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome.text.starts_with("old_string is empty") && outcome.text.contains("use write_file"),
        "{}",
        outcome.text
    );
}

#[test]
fn a_missing_file_points_to_write_file() {
    let (_dir, workspace) = workspace();
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "none.rs", "old_string": "a", "new_string": "b"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .starts_with("`none.rs` does not exist. To create it, use write_file"),
        "{}",
        outcome.text
    );
    // A file of a similar name is offered (`shop.pricing.py` for `pricing.py`).
    std::fs::write(workspace.root().join("pricing.py"), "RATE = 0.10\n").unwrap();
    let near = call(
        &EditFile,
        &workspace,
        json!({"path": "shop.pricing.py", "old_string": "0.10", "new_string": "0.15"}),
    );
    assert!(
        near.text
            .starts_with("`shop.pricing.py` does not exist; did you mean `pricing.py`?"),
        "{}",
        near.text
    );
}

#[test]
fn a_fifo_is_refused_promptly() {
    let (_dir, workspace) = workspace();
    mkfifo(&workspace.root().join("pipe"));
    let outcome = call_within(
        EditFile,
        workspace.root(),
        json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        Duration::from_secs(5),
    );
    assert!(!outcome.ok);
    assert!(
        outcome.text.starts_with("`pipe` is a named pipe (FIFO)"),
        "{}",
        outcome.text
    );
}

#[test]
fn a_missing_argument_is_named() {
    let (_dir, workspace) = workspace();
    let outcome = call(
        &EditFile,
        &workspace,
        json!({"path": "a", "old_string": "x"}),
    );
    assert!(!outcome.ok);
    assert!(
        outcome
            .text
            .contains("missing required parameter `new_string`"),
        "{}",
        outcome.text
    );
    assert!(EditFile.is_source_edit());
}
