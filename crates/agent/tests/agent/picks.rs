//! Answers and calls that use what the results showed: a later call whose values a
//! result already gave runs without waiting, a file's text recited for a task that
//! asks for an action is no answer, and an answer that names another item of a
//! compared list than the task's superlative picks is held once; a later call whose
//! value is only a word of the task's prose ("latest") waits for the result that
//! has the value.

use std::sync::Arc;

use rein_agent::{Profile, RunConfig};
use rein_protocol::{FunctionSpec, RunEvent as TraceEvent, ToolSpec};
use rein_test_support::ScriptedBackend;
use rein_tools::{Access, Registry, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use super::{call, recoveries, run_full, run_with_tools, tools_run};

const LOG_TASK: &str = "server.log has exactly one ERROR line. Find it, and write just its gateway code into a new file named incident.txt. Then tell me the code.";

fn log_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("server.log"),
        "INFO ok\nINFO ok\nERROR charge failed: gateway returned code PG-4471\nINFO ok\n",
    )
    .unwrap();
    dir
}

fn search_errors() -> String {
    call(
        "search",
        r#"{"pattern": "ERROR", "path": "server.log", "mode": "content"}"#,
    )
}

#[test]
fn a_later_call_whose_values_a_result_gave_runs_without_waiting() {
    let dir = log_workspace();
    let both = [
        call("read_file", r#"{"path": "server.log"}"#),
        call(
            "write_file",
            r#"{"path": "incident.txt", "content": "PG-4471"}"#,
        ),
    ]
    .join("\n");
    let replies = vec![search_errors(), both, "The code is PG-4471.".to_string()];
    let r = run_full(dir.path(), LOG_TASK, replies);
    assert_eq!(r.result.answer.as_deref(), Some("The code is PG-4471."));
    assert_eq!(
        tools_run(&r.events),
        vec!["search", "read_file", "write_file"]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("incident.txt")).unwrap(),
        "PG-4471"
    );
    assert!(
        recoveries(&r.events).is_empty(),
        "{:?}",
        recoveries(&r.events)
    );
}

#[test]
fn a_later_call_with_a_value_no_result_gave_still_waits() {
    let dir = log_workspace();
    let guessed = [
        call("read_file", r#"{"path": "server.log"}"#),
        call(
            "write_file",
            r#"{"path": "incident.txt", "content": "PG-9999"}"#,
        ),
    ]
    .join("\n");
    let write = call(
        "write_file",
        r#"{"path": "incident.txt", "content": "PG-4471"}"#,
    );
    let replies = vec![
        search_errors(),
        guessed,
        write,
        "The code is PG-4471.".to_string(),
    ];
    let r = run_full(dir.path(), LOG_TASK, replies);
    assert_eq!(
        tools_run(&r.events),
        vec!["search", "read_file", "write_file"]
    );
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::CallsDeferred { tools, .. } if tools == &["write_file".to_string()])));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("incident.txt")).unwrap(),
        "PG-4471"
    );
}

#[test]
fn a_file_recited_in_result_tags_for_a_task_that_asks_for_an_action_is_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "## Procedure\nCreate the file out.txt holding the word ready.\n",
    )
    .unwrap();
    let recited =
        "<tool_response>\nCreate the file out.txt holding the word ready.\n</tool_response>";
    let replies = vec![
        call("read_file", r#"{"path": "README.md"}"#),
        recited.to_string(),
        call("write_file", r#"{"path": "out.txt", "content": "ready"}"#),
        "Done: out.txt holds ready.".to_string(),
    ];
    let task = "Read README.md and carry out its procedure.";
    let r = run_full(dir.path(), task, replies.clone());
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Done: out.txt holds ready.")
    );
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(dir.path().join("out.txt").exists());

    // A task that asks to be shown the text takes the recited result as its answer.
    let shown = "Show me the procedure in README.md.";
    let r = run_full(dir.path(), shown, replies);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Create the file out.txt holding the word ready.")
    );
}

/// A tool that lists a user's orders as JSON, reading nothing of the workspace.
struct Orders;

impl Tool for Orders {
    fn name(&self) -> &str {
        "list_orders"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: "list_orders".into(),
                description: Some("Lists a user's orders.".into()),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"user_id": {"type": "string"}},
                    "required": ["user_id"]
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, _args: &Value, _workspace: &Workspace) -> ToolOutcome {
        ToolOutcome::success(
            json!({"orders": [
                {"id": "ORD-1", "placed_at": "2024-01-22"},
                {"id": "ORD-2", "placed_at": "2024-04-05"},
                {"id": "ORD-3", "placed_at": "2024-06-10"}
            ]})
            .to_string(),
        )
    }
}

#[test]
fn an_answer_naming_another_item_than_the_superlative_picks_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.add(Arc::new(Orders));
    let task = "List the orders of user U-7731 and tell me the id of the one with the latest placed_at date.";
    let list = call("list_orders", r#"{"user_id": "U-7731"}"#);
    let backend = ScriptedBackend::new(
        vec![
            list.clone(),
            "The latest order is ORD-2.".to_string(),
            "The latest order is ORD-3.".to_string(),
        ],
        true,
    );
    let r = run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The latest order is ORD-3.")
    );
    let note = r.agent.backend().requests[2]
        .messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    assert!(
        note.starts_with("Check your pick") && note.contains("ORD-3") && note.contains("ORD-2"),
        "{note}"
    );
    // Held once: the same wrong pick again is the answer.
    let backend = ScriptedBackend::new(
        vec![
            list,
            "The latest order is ORD-2.".to_string(),
            "It is ORD-2.".to_string(),
        ],
        true,
    );
    let r = run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("It is ORD-2."));
}

/// A tool that answers every call with the same text.
struct Canned {
    name: &'static str,
    property: &'static str,
    result: &'static str,
}

impl Tool for Canned {
    fn name(&self) -> &str {
        self.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: self.name.into(),
                description: Some(format!("Gets a {}.", self.name)),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"repo": {"type": "string"}, self.property: {"type": "string"}},
                    "required": ["repo"]
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, _args: &Value, _workspace: &Workspace) -> ToolOutcome {
        ToolOutcome::success(self.result.to_string())
    }
}

#[test]
fn a_later_call_whose_value_is_a_word_of_the_task_waits_for_the_result_that_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    for (name, property, result) in [
        (
            "get_repository",
            "repo",
            "full_name: acme/ledger\ndefault_branch: trunk",
        ),
        (
            "get_branch",
            "branch",
            "name: trunk\ncommit.sha: 9f3c2e1ab7d4",
        ),
        (
            "get_ci_status",
            "sha",
            "checks:\n- name: lint, state: failure",
        ),
    ] {
        registry.add(Arc::new(Canned {
            name,
            property,
            result,
        }));
    }
    let task = "For the repository acme/ledger, get the repository to find its default branch, get that branch to find the sha of its latest commit, then get the CI status of that commit sha and tell me which check failed.";
    // The branch call copies `trunk` from a result; the status call sends "latest", a
    // word of the task, before any result has a sha.
    let chain = [
        call(
            "get_branch",
            r#"{"repo": "acme/ledger", "branch": "trunk"}"#,
        ),
        call(
            "get_ci_status",
            r#"{"repo": "acme/ledger", "sha": "latest"}"#,
        ),
    ]
    .join("\n");
    let backend = ScriptedBackend::new(
        vec![
            call("get_repository", r#"{"repo": "acme/ledger"}"#),
            chain,
            call(
                "get_ci_status",
                r#"{"repo": "acme/ledger", "sha": "9f3c2e1ab7d4"}"#,
            ),
            "The lint check failed.".to_string(),
        ],
        true,
    );
    let r = run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(
        tools_run(&r.events),
        vec!["get_repository", "get_branch", "get_ci_status"]
    );
    assert!(r.events.iter().any(|e| matches!(
        e,
        TraceEvent::CallsDeferred { tools, .. } if tools == &["get_ci_status".to_string()]
    )));
    assert_eq!(r.result.answer.as_deref(), Some("The lint check failed."));
}
