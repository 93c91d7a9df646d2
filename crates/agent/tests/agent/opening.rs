//! The conversation's opening: a system prompt that is the same in every workspace
//! (so one cached prefix serves them all), then the workspace facts and the task.

use super::*;
use rein_test_support::SeenTurn;

/// The first request of a run of `task` in `dir` (the model answers at once).
fn first_request(dir: &Path, task: &str) -> SeenTurn {
    let r = run_full(dir, task, vec!["Done.".into()]);
    r.agent.backend().requests[0].clone()
}

#[test]
fn the_system_prompt_is_the_same_in_every_workspace_and_the_facts_open_the_request() {
    let rust = tempfile::tempdir().unwrap();
    std::fs::write(rust.path().join("Cargo.toml"), "[package]\nname = \"a\"\n").unwrap();
    std::fs::write(rust.path().join("main.rs"), "fn main() {}\n").unwrap();
    let node = tempfile::tempdir().unwrap();
    std::fs::write(node.path().join("package.json"), "{}\n").unwrap();
    std::fs::create_dir(node.path().join("src")).unwrap();
    std::fs::write(node.path().join("src/index.js"), "// TODO\n").unwrap();

    let task = "Count the files.";
    let in_rust = first_request(rust.path(), task);
    let in_node = first_request(node.path(), task);
    assert_eq!(in_rust.messages[0].role, Role::System);
    assert_eq!(
        in_rust.messages[0].content, in_node.messages[0].content,
        "the system prompt must not depend on the workspace"
    );
    assert!(in_rust.tools.is_some());
    assert_eq!(in_rust.tools, in_node.tools);
    let system = in_rust.messages[0].content.as_deref().unwrap();
    assert!(!system.contains("Cargo.toml") && !system.contains("package.json"));

    let opening = |request: &SeenTurn| request.messages[1].content.clone().unwrap();
    let (rust_opening, node_opening) = (opening(&in_rust), opening(&in_node));
    assert!(rust_opening.starts_with("Workspace facts:\n"));
    assert!(rust_opening.contains("Cargo.toml: a Rust project"));
    assert!(node_opening.contains("package.json: a JavaScript/TypeScript project"));
    assert!(rust_opening.ends_with(&format!("\n\n{task}")));
    assert!(node_opening.ends_with(&format!("\n\n{task}")));
}
