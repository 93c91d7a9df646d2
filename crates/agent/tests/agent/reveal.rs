//! Deferred tools: kept out of the prompt, callable from the turn after a result
//! reveals them (`tool_search`), with the prompt's tool definitions unchanged.

use std::sync::Arc;

use rein_agent::{Profile, RunConfig};
use rein_protocol::{FunctionSpec, RunEvent as TraceEvent, ToolSpec};
use rein_test_support::ScriptedBackend;
use rein_tools::{Access, Registry, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use super::{call, recoveries, run_with_tools, Run};

/// A tool that is not listed until revealed.
struct FindCustomer;

impl Tool for FindCustomer {
    fn name(&self) -> &str {
        "crm__find_customer"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: self.name().into(),
                description: Some("Look up a customer by email.".into()),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"email": {"type": "string"}},
                    "required": ["email"]
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        match args["email"].as_str() {
            Some("ada@example.com") => ToolOutcome::success("customer 42: Ada Lovelace"),
            _ => ToolOutcome::failure("no such customer"),
        }
    }

    fn deferred(&self) -> bool {
        true
    }
}

/// A search that always finds `crm__find_customer`.
struct Search;

impl Tool for Search {
    fn name(&self) -> &str {
        "tool_search"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: self.name().into(),
                description: Some("Find tools by what they do.".into()),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"]
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, _args: &Value, _workspace: &Workspace) -> ToolOutcome {
        ToolOutcome::success("- crm__find_customer(email: string) - Look up a customer by email.")
            .revealing(vec!["crm__find_customer".into(), "no_such_tool".into()])
    }

    fn finds_tools(&self) -> bool {
        true
    }
}

const TASK: &str = "Find the customer with the email ada@example.com and tell me their name.";

fn run_deferred(replies: Vec<String>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.add(Arc::new(FindCustomer));
    registry.add(Arc::new(Search));
    let backend = ScriptedBackend::new(replies, true);
    run_with_tools(
        dir.path(),
        TASK,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    )
}

fn callable(run: &Run, request: usize, name: &str) -> bool {
    run.agent.backend().requests[request]
        .request
        .tools
        .as_ref()
        .is_some_and(|tools| tools.get(name).is_some())
}

#[test]
fn a_revealed_tool_is_callable_from_the_next_turn_and_the_prompt_keeps_its_tools() {
    let r = run_deferred(vec![
        call("tool_search", r#"{"query": "customer email"}"#),
        call("crm__find_customer", r#"{"email": "ada@example.com"}"#),
        "The customer is Ada Lovelace.".to_string(),
    ]);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The customer is Ada Lovelace.")
    );
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 3);
    // Not offered at first, not even as a listed definition.
    assert!(!callable(&r, 0, "crm__find_customer"));
    let shown = |index: usize| requests[index].tools.clone().unwrap_or_default();
    assert!(!serde_json::to_string(&shown(0))
        .unwrap()
        .contains("crm__find_customer"));
    // Callable after the search, with the same definitions in the prompt.
    assert!(callable(&r, 1, "crm__find_customer"));
    assert!(!callable(&r, 1, "no_such_tool"));
    assert_eq!(shown(0), shown(1));
    assert_eq!(shown(1), shown(2));
    let ran: Vec<(String, bool, String)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult {
                name, ok, output, ..
            } => Some((name.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(ran.len(), 2, "{ran:?}");
    assert_eq!(ran[1].0, "crm__find_customer");
    assert!(ran[1].1 && ran[1].2.contains("Ada Lovelace"), "{ran:?}");
    // The run start lists the tools shown, not the deferred one.
    let listed = r
        .events
        .iter()
        .find_map(|e| match e {
            TraceEvent::RunStart { tools, .. } => Some(tools.clone()),
            _ => None,
        })
        .unwrap();
    assert!(listed.iter().any(|t| t == "tool_search"));
    assert!(!listed.iter().any(|t| t == "crm__find_customer"));
}

#[test]
fn with_tool_preview_the_run_opens_with_the_harness_s_search_for_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.add(Arc::new(FindCustomer));
    registry.add(Arc::new(Search));
    let mut config = RunConfig::new(Profile::Full);
    config.set("tool_preview", "on").unwrap();
    let backend = ScriptedBackend::new(
        vec![
            call("crm__find_customer", r#"{"email": "ada@example.com"}"#),
            "The customer is Ada Lovelace.".to_string(),
        ],
        true,
    );
    let r = run_with_tools(dir.path(), TASK, backend, &registry, config);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The customer is Ada Lovelace.")
    );
    // Callable from the first turn, and the first request shows the search already
    // made: the task as its query, the tools found as its result.
    assert!(callable(&r, 0, "crm__find_customer"));
    let first = &r.agent.backend().requests[0].messages;
    let assistant = first
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .expect("the search's call");
    assert_eq!(assistant.tool_calls[0].function.name, "tool_search");
    assert!(assistant.tool_calls[0].function.arguments["query"]
        .as_str()
        .is_some_and(|q| q.contains("ada@example.com")));
    assert!(first.iter().any(|m| m
        .content
        .as_deref()
        .is_some_and(|c| c.contains("crm__find_customer(email: string)"))));
    // The model's own calls count; the harness's search does not.
    assert_eq!(r.result.tool_calls, 1);
    // Off (the default), the first request has no such exchange.
    let r = run_deferred(vec!["The customer is unknown.".to_string()]);
    assert!(r.agent.backend().requests[0]
        .messages
        .iter()
        .all(|m| m.tool_calls.is_empty()));
}

#[test]
fn a_deferred_tool_called_before_a_search_is_an_unknown_tool() {
    let r = run_deferred(vec![
        call("crm__find_customer", r#"{"email": "ada@example.com"}"#),
        call("tool_search", r#"{"query": "customer email"}"#),
        call("crm__find_customer", r#"{"email": "ada@example.com"}"#),
        "The customer is Ada Lovelace.".to_string(),
    ]);
    assert!(
        recoveries(&r.events).iter().any(|c| c == "unknown_tool"),
        "{:?}",
        recoveries(&r.events)
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The customer is Ada Lovelace.")
    );
}

/// A server's file reader, not confined to the workspace, kept behind the search.
struct ServerRead;

impl Tool for ServerRead {
    fn name(&self) -> &str {
        "fs__read_text_file"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: self.name().into(),
                description: Some("Read a text file.".into()),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                    "required": ["path"]
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        match args["path"].as_str() {
            Some("/srv/notes/release.md") => ToolOutcome::success("## 0.4.2\nOwner: Priya Raman."),
            _ => ToolOutcome::failure("no such file"),
        }
    }

    fn deferred(&self) -> bool {
        true
    }
}

fn run_with_server_read(task: &str, replies: Vec<String>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::builtin();
    registry.add(Arc::new(ServerRead));
    registry.add(Arc::new(Search));
    let backend = ScriptedBackend::new(replies, true);
    run_with_tools(
        dir.path(),
        task,
        backend,
        &registry,
        RunConfig::new(Profile::Full),
    )
}

fn outputs(run: &Run) -> Vec<(String, bool, String)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult {
                name, ok, output, ..
            } => Some((name.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect()
}

/// The last tool result in the prompt of request `index`.
fn latest_tool_message(run: &Run, index: usize) -> String {
    run.agent.backend().requests[index]
        .request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == rein_protocol::Role::Tool)
        .and_then(|m| m.content.clone())
        .unwrap_or_default()
}

#[test]
fn a_read_refused_outside_the_workspace_names_the_server_tool_and_reveals_it() {
    let r = run_with_server_read(
        "Which version do the notes at /srv/notes/release.md announce?",
        vec![
            call("read_file", r#"{"path": "/srv/notes/release.md"}"#),
            call("fs__read_text_file", r#"{"path": "/srv/notes/release.md"}"#),
            "Version 0.4.2.".to_string(),
        ],
    );
    let ran = outputs(&r);
    assert_eq!(ran.len(), 2, "{ran:?}");
    assert!(!ran[0].1);
    // What the model reads next: the refusal, the tool that can reach the path, the call.
    let seen = latest_tool_message(&r, 1);
    assert!(
        seen.contains("is outside the workspace")
            && seen.contains("`fs__read_text_file` does this job. Call it:")
            && seen.contains(
                r#"{"name":"fs__read_text_file","arguments":{"path":"/srv/notes/release.md"}}"#
            ),
        "{seen}"
    );
    // Revealed by the refusal: callable on the next turn, no search needed.
    assert!(!callable(&r, 0, "fs__read_text_file"));
    assert!(callable(&r, 1, "fs__read_text_file"));
    assert!(ran[1].1 && ran[1].2.contains("0.4.2"), "{ran:?}");
    assert_eq!(r.result.answer.as_deref(), Some("Version 0.4.2."));
}

#[test]
fn a_path_inside_the_workspace_gets_no_server_tool() {
    let r = run_with_server_read(
        "Which version does notes/release.md announce?",
        vec![
            call("read_file", r#"{"path": "notes/release.md"}"#),
            "I could not find it.".to_string(),
            "I could not find it.".to_string(),
        ],
    );
    let ran = outputs(&r);
    assert!(!ran[0].1);
    let seen = latest_tool_message(&r, 1);
    assert!(seen.contains("does not exist"), "{seen}");
    assert!(!seen.contains("fs__read_text_file"), "{seen}");
    assert!(!callable(&r, 1, "fs__read_text_file"));
}

#[test]
fn an_answer_is_not_held_for_a_tool_search_left_waiting() {
    let r = run_with_server_read(
        "Who owns the release in /srv/notes/release.md? Answer with the name.",
        vec![
            call("read_file", r#"{"path": "/srv/notes/release.md"}"#),
            format!(
                "{}\n{}",
                call("fs__read_text_file", r#"{"path": "/srv/notes/release.md"}"#),
                call("tool_search", r#"{"query": "owner"}"#)
            ),
            "The owner is Priya Raman.".to_string(),
        ],
    );
    let details: Vec<_> = r
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Recovery { detail, .. } => Some(detail.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The owner is Priya Raman."),
        "{details:?}"
    );
    assert!(!recoveries(&r.events).iter().any(|c| c == "not_an_answer"));
}
