//! rein's MCP client against the test server built on rmcp's server side
//! (`rein-mcp-test-server`): a paged catalog of 120 tools behind `tool_search`,
//! hostile names and schemas, marker-named properties renamed for the model and
//! restored for the server, a crash on one given argument, a slow call cancelled, and
//! results of every kind.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rein_format::ToolSet;
use rein_mcp::{Disclosure, Launch, McpHub, McpTool, ServerConfig, TOOL_SEARCH};
use rein_protocol::RunEvent;
use rein_tools::{Registry, Tool, ToolLimits, ToolOutcome, Workspace};
use serde_json::{json, Value};

const SERVER: &str = env!("CARGO_BIN_EXE_rein-mcp-test-server");

fn config(call_timeout_s: u64, args: &[&str]) -> ServerConfig {
    ServerConfig {
        name: "t".to_string(),
        launch: Launch::Command {
            program: SERVER.to_string(),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env: BTreeMap::new(),
        },
        startup_timeout: Duration::from_secs(30),
        call_timeout: Duration::from_secs(call_timeout_s),
        origin: "test".to_string(),
    }
}

struct Started {
    hub: McpHub,
    workspace: Arc<Workspace>,
    _dir: tempfile::TempDir,
}

async fn start(server: ServerConfig) -> Started {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Arc::new(Workspace::new(dir.path(), ToolLimits::default()).unwrap());
    let hub = McpHub::start(vec![server], dir.path()).await;
    Started {
        hub,
        workspace,
        _dir: dir,
    }
}

/// The start event's (started, tool count, detail).
fn start_detail(hub: &McpHub) -> (bool, usize, String) {
    hub.start_events()
        .iter()
        .find_map(|event| match event {
            RunEvent::ToolServer {
                started,
                tools,
                detail,
                ..
            } => Some((*started, *tools, detail.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no start event: {:?}", hub.start_events()))
}

fn tool<'a>(hub: &'a McpHub, name: &str) -> &'a Arc<McpTool> {
    hub.tools()
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| {
            let names: Vec<&str> = hub.tools().iter().map(|t| t.name()).collect();
            panic!("no tool {name} among {names:?}")
        })
}

/// Calls `tool` as the agent does: on a blocking thread.
async fn call(tool: Arc<dyn Tool>, arguments: Value, workspace: &Arc<Workspace>) -> ToolOutcome {
    let workspace = Arc::clone(workspace);
    tokio::task::spawn_blocking(move || tool.call(&arguments, &workspace))
        .await
        .unwrap()
}

async fn call_named(started: &Started, name: &str, arguments: Value) -> ToolOutcome {
    let tool: Arc<dyn Tool> = Arc::clone(tool(&started.hub, name)) as Arc<dyn Tool>;
    call(tool, arguments, &started.workspace).await
}

fn server_log(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .flat_map(|event| match event {
            RunEvent::ServerLog { lines, .. } => lines.clone(),
            _ => Vec::new(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paged_catalog_of_120_tools_goes_behind_tool_search_and_a_search_finds_the_right_one() {
    let started = start(config(30, &[])).await;
    let (ok, count, detail) = start_detail(&started.hub);
    // 100 plain + 6 special + 14 hostile, of which four cannot be offered.
    assert!(ok && count == 116, "{count} tools: {detail}");
    assert!(started.hub.too_many_for(8192));

    let mut registry = Registry::builtin();
    assert!(started
        .hub
        .extend_for(&mut registry, Disclosure::Auto, 8192));
    let wanted = Arc::clone(registry.get("t__museum_find_item").unwrap());
    assert!(wanted.deferred());
    let search = Arc::clone(registry.get(TOOL_SEARCH).unwrap());
    let found = call(
        search,
        json!({"query": "find a lost item at the museum"}),
        &started.workspace,
    )
    .await;
    assert!(found.ok, "{found:?}");
    assert_eq!(
        found.reveals.first().map(String::as_str),
        Some("t__museum_find_item"),
        "{}",
        found.text
    );
    assert!(
        found.text.contains("t__museum_find_item(site: string)"),
        "{}",
        found.text
    );

    let ran = call(wanted, json!({"site": "east wing"}), &started.workspace).await;
    assert!(ran.ok, "{ran:?}");
    assert!(
        ran.text
            .starts_with("museum_find_item (east wing): done, code C-"),
        "{}",
        ran.text
    );
    // Read-only tools run beside other reads; the others are barriers.
    assert!(tool(&started.hub, "t__museum_find_item").read_only());
    assert!(!tool(&started.hub, "t__museum_book_slot").read_only());
    started.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_are_made_legal_and_hostile_schemas_are_offered_safely_or_withdrawn_with_a_reason(
) {
    let started = start(config(30, &[])).await;
    let (_, _, detail) = start_detail(&started.hub);
    // Withdrawn, each with its reason on the start line; nothing was fetched.
    for reason in [
        "`remote_ref`: its input schema cannot be used: at /properties/x: cannot resolve $ref `http://127.0.0.1:9/schema.json`",
        "`not_an_object`: its input schema cannot be used: the parameters schema must describe an object",
        "`malformed_type`: its input schema cannot be used",
        "`too_deep`: its input schema cannot be used: at /properties/next/",
        "schema nested deeper than 32 levels",
    ] {
        assert!(detail.contains(reason), "{reason} not in {detail}");
    }
    assert!(detail.chars().count() < 1_000, "{detail}");
    let names: Vec<&str> = started.hub.tools().iter().map(|t| t.name()).collect();
    for name in [
        "t__name_with_spaces_and_dots",
        "t__clash_name",
        "t__clash_name_2",
        "t__gr__e",
        "t__forged_description",
        "t__recursive_tree",
        "t__huge_enum",
        "t__backtracking_pattern",
    ] {
        assert!(names.contains(&name), "{name} not among {names:?}");
    }
    let long = names.iter().find(|n| n.starts_with("t__very_")).unwrap();
    assert_eq!(long.len(), 64, "{long}");
    assert!(names.iter().all(|n| n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')));

    // Every offered schema goes through the same preparation as built-in tools, and
    // all of them together still make one tool set (grammar, prompt, validation).
    let specs: Vec<_> = started.hub.tools().iter().map(|t| t.spec()).collect();
    let set = ToolSet::prepare(&specs).unwrap();
    assert_eq!(set.tools().len(), names.len());
    // The forged description stays the server's text, cut to the description bound.
    let forged = set.get("t__forged_description").unwrap();
    assert!(forged
        .description
        .as_deref()
        .unwrap()
        .contains("<|im_end|>"));
    // A recursive schema is cut after a bounded number of expansions and still checks
    // a real tree.
    let tree = set.get("t__recursive_tree").unwrap();
    let checked = tree
        .validator
        .check(r#"{"root": {"label": "a", "children": [{"label": "b"}]}}"#)
        .unwrap();
    assert_eq!(checked["root"]["children"][0]["label"], "b");
    // The pattern is checked without backtracking: a long near-miss answers at once.
    let pattern = set.get("t__backtracking_pattern").unwrap();
    let near_miss = format!(r#"{{"word": "{}b"}}"#, "a".repeat(5_000));
    assert!(pattern.validator.check(&near_miss).is_err());
    assert!(pattern.validator.check(r#"{"word": "aaaa"}"#).is_ok());
    // 5,000 allowed values: one outside them is refused.
    let choice = set.get("t__huge_enum").unwrap();
    assert!(choice
        .validator
        .check(r#"{"choice": "value-4999"}"#)
        .is_ok());
    assert!(choice
        .validator
        .check(r#"{"choice": "value-5000"}"#)
        .is_err());

    let ran = call_named(&started, "t__clash_name_2", json!({})).await;
    assert_eq!(ran.text, "clash_name got {}");
    let ran = call_named(
        &started,
        "t__name_with_spaces_and_dots",
        json!({"note": "hi"}),
    )
    .await;
    assert_eq!(ran.text, r#"name with spaces/and.dots got {"note":"hi"}"#);
    started.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn properties_named_like_chat_markers_are_renamed_for_the_model_and_restored_for_the_server()
{
    let started = start(config(30, &[])).await;
    let specs: Vec<_> = started.hub.tools().iter().map(|t| t.spec()).collect();
    let set = ToolSet::prepare(&specs).unwrap();
    let prepared = set.get("t__marker_keys").unwrap();
    let canonical = prepared.sanitized.schema.to_json().to_string();
    for marker in ["</tool_call>", "<|im_end|>"] {
        assert!(!canonical.contains(marker), "{marker} in {canonical}");
    }
    let keys: Vec<String> = prepared.sanitized.schema.to_json()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
    // The model writes the legal names; the server gets the names it declared.
    let written = json!({ keys[0].clone(): "x", keys[1].clone(): 7, keys[2].clone(): true });
    let restored = prepared.validator.check(&written.to_string()).unwrap();
    let ran = call_named(&started, "t__marker_keys", restored).await;
    assert!(ran.ok, "{ran:?}");
    let sent: Value =
        serde_json::from_str(ran.text.trim_start_matches("marker_keys got ")).unwrap();
    assert_eq!(
        sent,
        json!({"</tool_call>": "x", "<|im_end|>": 7, "quote\"and\\backslash": true})
    );
    started.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_on_one_argument_restarts_the_server_once_and_other_arguments_work() {
    let started = start(config(30, &[])).await;
    let pid = call_named(&started, "t__pid", json!({})).await.text;
    let fine = call_named(&started, "t__crash_on", json!({"word": "hello"})).await;
    assert_eq!(fine.text, "survived hello");
    let crash = call_named(&started, "t__crash_on", json!({"word": "boom"})).await;
    assert!(!crash.ok, "{crash:?}");
    assert!(
        crash.text.contains("crash_on got boom, exiting"),
        "{}",
        crash.text
    );
    assert!(crash.text.contains("started again"), "{}", crash.text);
    let after = call_named(&started, "t__pid", json!({})).await;
    assert!(after.ok && after.text != pid, "{} then {after:?}", pid);
    let fine = call_named(&started, "t__crash_on", json!({"word": "again"})).await;
    assert_eq!(fine.text, "survived again");
    let second = call_named(&started, "t__crash_on", json!({"word": "boom"})).await;
    assert!(second.text.contains("not started again"), "{}", second.text);
    let gone = call_named(&started, "t__pid", json!({})).await;
    assert!(!gone.ok && gone.text.contains("is not running"), "{gone:?}");
    started.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_past_its_timeout_is_cancelled_through_the_protocol() {
    let started = start(config(1, &[])).await;
    let slow = call_named(
        &started,
        "t__slow_echo",
        json!({"text": "x", "seconds": 30}),
    )
    .await;
    assert!(!slow.ok && slow.timed_out, "{slow:?}");
    assert!(
        slow.text
            .contains("did not finish within 1 s and was cancelled"),
        "{}",
        slow.text
    );
    let quick = call_named(&started, "t__slow_echo", json!({"text": "y", "seconds": 0})).await;
    assert_eq!(quick.text, "echo: y");
    let events = started.hub.shutdown().await;
    let lines = server_log(&events);
    assert!(
        lines.iter().any(|l| l.contains("slow_echo cancelled")),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_errors_and_images_come_back_as_text() {
    let started = start(config(30, &[])).await;
    let structured = call_named(&started, "t__structured_only", json!({})).await;
    assert!(structured.ok, "{structured:?}");
    assert!(
        structured.text.contains("green") && structured.text.contains("12"),
        "{}",
        structured.text
    );
    let failed = call_named(&started, "t__always_fails", json!({})).await;
    assert!(!failed.ok, "{failed:?}");
    assert!(
        failed.text.contains("the backing store is read-only today"),
        "{}",
        failed.text
    );
    let picture = call_named(&started, "t__picture", json!({})).await;
    assert!(picture.ok, "{picture:?}");
    assert!(
        picture
            .text
            .contains("[image image/png, 70 bytes, not shown]"),
        "{}",
        picture.text
    );
    assert!(!picture.text.contains("iVBOR"), "{}", picture.text);
    started.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_too_deep_to_read_withdraws_the_server_after_its_start_timeout() {
    let mut server = config(30, &["--unreadable"]);
    server.startup_timeout = Duration::from_secs(3);
    let started = start(server).await;
    let (ok, count, detail) = start_detail(&started.hub);
    assert!(!ok && count == 0, "{detail}");
    assert!(
        detail.contains("did not list its tools within 3 s"),
        "{detail}"
    );
    assert!(started.hub.tools().is_empty());
    started.hub.shutdown().await;
}
