//! rein's MCP client against real servers: the reference `everything` and
//! `filesystem` servers and a crash-on-demand server on the reference SDK (all under
//! tests/mcp-servers, installed by scripts/setup.sh), plus programs that are no
//! servers at all.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rein_mcp::{Disclosure, Launch, McpHub, McpTool, ServerConfig, TOOL_SEARCH};
use rein_protocol::RunEvent;
use rein_test_support::{mcp_servers_dir, processes_with};
use rein_tools::{Access, Registry, Tool, ToolLimits, ToolOutcome, Workspace};
use serde_json::{json, Value};

fn node_server(name: &str, script: &str, args: &[&str]) -> ServerConfig {
    let mut all = vec![mcp_servers_dir().join(script).display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    ServerConfig {
        name: name.to_string(),
        launch: Launch::Command {
            program: "node".to_string(),
            args: all,
            env: BTreeMap::new(),
        },
        startup_timeout: Duration::from_secs(30),
        call_timeout: Duration::from_secs(30),
        origin: "test".to_string(),
    }
}

fn everything() -> ServerConfig {
    node_server(
        "ev",
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &["stdio"],
    )
}

fn crashy() -> ServerConfig {
    node_server("crashy", "crashy.mjs", &[])
}

fn command(name: &str, program: &str, args: &[&str], startup_s: u64) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        launch: Launch::Command {
            program: program.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::new(),
        },
        startup_timeout: Duration::from_secs(startup_s),
        call_timeout: Duration::from_secs(30),
        origin: "test".to_string(),
    }
}

fn workspace(dir: &tempfile::TempDir) -> Arc<Workspace> {
    Arc::new(Workspace::new(dir.path(), ToolLimits::default()).unwrap())
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
async fn call(tool: &Arc<McpTool>, arguments: Value, workspace: &Arc<Workspace>) -> ToolOutcome {
    let tool = Arc::clone(tool);
    let workspace = Arc::clone(workspace);
    tokio::task::spawn_blocking(move || tool.call(&arguments, &workspace))
        .await
        .unwrap()
}

fn start_detail(hub: &McpHub, server: &str) -> (bool, usize, String) {
    hub.start_events()
        .iter()
        .find_map(|event| match event {
            RunEvent::ToolServer {
                server: name,
                started,
                tools,
                detail,
            } if name == server => Some((*started, *tools, detail.clone())),
            _ => None,
        })
        .unwrap()
}

async fn gone_within(marker: &str, limit: Duration) -> bool {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if processes_with(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    processes_with(marker).is_empty()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_everything_server_lists_tools_and_answers_calls() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let hub = McpHub::start(vec![everything()], dir.path()).await;
    let (started, count, detail) = start_detail(&hub, "ev");
    assert!(started, "{detail}");
    assert!(count >= 10, "{count} tools: {detail}");
    assert_eq!(count, hub.tools().len());

    let echo = tool(&hub, "ev__echo");
    assert_eq!(echo.remote_name(), "echo");
    let spec = echo.spec();
    assert_eq!(spec.function.parameters.as_ref().unwrap()["type"], "object");
    let outcome = call(echo, json!({"message": "hi there"}), &workspace).await;
    assert!(outcome.ok, "{outcome:?}");
    assert_eq!(outcome.text, "Echo: hi there");
    assert!(echo.untrusted_output());

    let sum = call(
        tool(&hub, "ev__get-sum"),
        json!({"a": 2, "b": 3}),
        &workspace,
    )
    .await;
    assert!(sum.ok && sum.text.contains('5'), "{sum:?}");

    let image = call(tool(&hub, "ev__get-tiny-image"), json!({}), &workspace).await;
    assert!(image.ok, "{image:?}");
    assert!(
        image.text.contains("[image image/png, ") && image.text.contains("bytes, not shown]"),
        "{}",
        image.text
    );
    assert!(
        !image.text.contains("iVBOR"),
        "base64 pasted: {}",
        image.text
    );

    let links = call(
        tool(&hub, "ev__get-resource-links"),
        json!({"count": 2}),
        &workspace,
    )
    .await;
    assert_eq!(
        links.text.matches("resource link: ").count(),
        2,
        "{}",
        links.text
    );

    // A server's read-only tool is a lookup; any other is a barrier.
    assert!(tool(&hub, "ev__get-env").read_only());
    assert_eq!(
        tool(&hub, "ev__get-env").access(&json!({}), &workspace),
        Access::Read(Vec::new())
    );
    let toggle = tool(&hub, "ev__toggle-simulated-logging");
    assert!(!toggle.read_only());
    assert_eq!(toggle.access(&json!({}), &workspace), Access::Barrier);

    // A bad argument is the server's error, returned as a failed call.
    let bad = call(tool(&hub, "ev__get-sum"), json!({"a": "two"}), &workspace).await;
    assert!(!bad.ok, "{bad:?}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_gets_only_the_base_environment_and_what_its_declaration_sets() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let mut config = everything();
    if let Launch::Command { env, .. } = &mut config.launch {
        env.insert("REIN_DECLARED".into(), "declared-value".into());
    }
    let hub = McpHub::start(vec![config], dir.path()).await;
    let outcome = call(tool(&hub, "ev__get-env"), json!({}), &workspace).await;
    assert!(outcome.ok, "{outcome:?}");
    let shown: Value = serde_json::from_str(&outcome.text).unwrap();
    assert_eq!(shown["REIN_DECLARED"], "declared-value");
    assert!(shown.get("PATH").is_some());
    // `cargo test` sets these in this process; none reaches the server.
    assert!(std::env::var("CARGO_MANIFEST_DIR").is_ok());
    assert!(shown.get("CARGO_MANIFEST_DIR").is_none(), "{shown}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_server_reads_a_workspace_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the code is PG-4471\n").unwrap();
    let workspace = workspace(&dir);
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let hub = McpHub::start(
        vec![node_server(
            "fs",
            "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
            &[&root],
        )],
        dir.path(),
    )
    .await;
    let (started, _, detail) = start_detail(&hub, "fs");
    assert!(started, "{detail}");
    let read = tool(&hub, "fs__read_text_file");
    assert!(read.read_only());
    let outcome = call(
        read,
        json!({"path": format!("{root}/notes.txt")}),
        &workspace,
    )
    .await;
    assert!(outcome.ok, "{outcome:?}");
    assert_eq!(outcome.text.trim(), "the code is PG-4471");
    let outside = call(read, json!({"path": "/etc/hostname"}), &workspace).await;
    assert!(!outside.ok, "{outside:?}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_cannot_start_are_left_out_with_one_line_each() {
    let dir = tempfile::tempdir().unwrap();
    let hub = McpHub::start(
        vec![
            command("missing", "/nonexistent/mcp-server", &[], 5),
            command(
                "quits",
                "sh",
                &["-c", "echo 'fatal: no config' >&2; exit 3"],
                5,
            ),
            command(
                "garbage",
                "sh",
                &["-c", "echo 'this is not json-rpc'; sleep 10"],
                3,
            ),
            everything(),
        ],
        dir.path(),
    )
    .await;
    let reasons: Vec<(String, String)> = ["missing", "quits", "garbage"]
        .iter()
        .map(|name| {
            let (started, tools, detail) = start_detail(&hub, name);
            assert!(!started && tools == 0, "{name}: {detail}");
            assert!(!detail.contains('\n'), "{name}: {detail}");
            (name.to_string(), detail)
        })
        .collect();
    assert!(
        reasons[0]
            .1
            .contains("cannot start `/nonexistent/mcp-server`"),
        "{reasons:?}"
    );
    assert!(reasons[1].1.contains("fatal: no config"), "{reasons:?}");
    assert!(reasons[2].1.contains("initialize"), "{reasons:?}");
    // The failures say so; the working server's tools are the only ones offered.
    assert_eq!(hub.failures().len(), 3);
    assert!(hub.tools().iter().all(|t| t.name().starts_with("ev__")));
    assert!(start_detail(&hub, "ev").0);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_initialize_times_out_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("31.{}", std::process::id());
    let hub = McpHub::start(vec![command("silent", "sleep", &[&marker], 1)], dir.path()).await;
    let (started, _, detail) = start_detail(&hub, "silent");
    assert!(!started);
    assert!(
        detail.contains("did not answer `initialize` within 1 s"),
        "{detail}"
    );
    assert!(
        gone_within(&format!("sleep\0{marker}"), Duration::from_secs(5)).await,
        "the silent server still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_timeout_is_cancelled_and_the_server_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let mut config = crashy();
    config.call_timeout = Duration::from_secs(1);
    let hub = McpHub::start(vec![config], dir.path()).await;
    let (started, _, detail) = start_detail(&hub, "crashy");
    assert!(started, "{detail}");
    let nap = call(
        tool(&hub, "crashy__nap"),
        json!({"seconds": 20}),
        &workspace,
    )
    .await;
    assert!(!nap.ok && nap.timed_out, "{nap:?}");
    assert!(
        nap.text
            .contains("did not finish within 1 s and was cancelled"),
        "{}",
        nap.text
    );
    let after = call(tool(&hub, "crashy__starts"), json!({}), &workspace).await;
    assert_eq!(after.text, "started 1 times");
    let logs = hub.shutdown().await;
    // The server saw the cancellation; its standard error went to the log.
    let lines: Vec<String> = logs
        .iter()
        .flat_map(|event| match event {
            RunEvent::ServerLog { lines, .. } => lines.clone(),
            _ => Vec::new(),
        })
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("nap cancelled")),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_is_started_again_once() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let hub = McpHub::start(vec![crashy()], dir.path()).await;
    let crash = tool(&hub, "crashy__crash");
    let first = call(crash, json!({}), &workspace).await;
    assert!(!first.ok, "{first:?}");
    assert!(
        first.text.contains("stopped during the call"),
        "{}",
        first.text
    );
    assert!(first.text.contains("crashing now"), "{}", first.text);
    assert!(first.text.contains("started again"), "{}", first.text);
    let starts = call(tool(&hub, "crashy__starts"), json!({}), &workspace).await;
    assert_eq!(starts.text, "started 2 times");
    let second = call(crash, json!({}), &workspace).await;
    assert!(second.text.contains("not started again"), "{}", second.text);
    let after = call(tool(&hub, "crashy__starts"), json!({}), &workspace).await;
    assert!(
        !after.ok && after.text.contains("is not running"),
        "{after:?}"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_down_ends_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("rein-group-test-{}", std::process::id());
    // The server runs as a grandchild (the shell does not exec it), beside a process
    // that never reads its input and so would outlive a closed pipe.
    let script = mcp_servers_dir()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let line = format!(
        "node -e 'setInterval(() => {{}}, 1000)' {marker}-idle & node {} stdio {marker}; wait",
        script.display()
    );
    let hub = McpHub::start(
        vec![command("nested", "sh", &["-c", &line], 30)],
        dir.path(),
    )
    .await;
    assert!(start_detail(&hub, "nested").0);
    assert!(!processes_with(&marker).is_empty());
    hub.shutdown().await;
    assert!(
        gone_within(&marker, Duration::from_secs(5)).await,
        "left running: {:?}",
        processes_with(&marker)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_server_tools_go_behind_tool_search_and_a_search_reveals_the_right_one() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let hub = McpHub::start(vec![node_server("catalog", "catalog.mjs", &[])], dir.path()).await;
    let (started, count, detail) = start_detail(&hub, "catalog");
    assert!(started && count == 123, "{count} tools: {detail}");
    // A name no API accepts is made legal; its forged description stays text (the
    // template marks control-token texts in every definition).
    assert!(hub
        .tools()
        .iter()
        .any(|t| t.name() == "catalog__weird_name_with_spaces_and_dots"));
    assert!(
        hub.definition_tokens() > 8192 / 10,
        "{}",
        hub.definition_tokens()
    );
    assert!(hub.too_many_for(8192));

    let mut registry = Registry::builtin();
    assert!(hub.extend_for(&mut registry, Disclosure::Auto, 8192));
    assert!(!registry.get("read_file").unwrap().deferred());
    let restart = Arc::clone(registry.get("catalog__devops_restart_a_service").unwrap());
    assert!(restart.deferred());
    let search = Arc::clone(registry.get(TOOL_SEARCH).unwrap());
    assert!(!search.deferred());
    let found = {
        let workspace = Arc::clone(&workspace);
        tokio::task::spawn_blocking(move || {
            search.call(
                &json!({"query": "restart a service", "limit": 3}),
                &workspace,
            )
        })
        .await
        .unwrap()
    };
    assert!(found.ok, "{found:?}");
    assert_eq!(found.reveals.len(), 3, "{found:?}");
    assert!(!found.text.contains("$schema"), "{}", found.text);
    assert_eq!(
        found.reveals[0], "catalog__devops_restart_a_service",
        "{}",
        found.text
    );
    assert!(
        found
            .text
            .contains("catalog__devops_restart_a_service(service: string)"),
        "{}",
        found.text
    );
    let ran = {
        let workspace = Arc::clone(&workspace);
        tokio::task::spawn_blocking(move || {
            restart.call(&json!({"service": "payments-api"}), &workspace)
        })
        .await
        .unwrap()
    };
    assert_eq!(
        ran.text,
        "devops_restart_a_service (payments-api): done, reference REF-1OTYNO"
    );
    hub.shutdown().await;

    // A few tools stay listed, and no search is offered.
    let few = McpHub::start(vec![crashy()], dir.path()).await;
    let mut listed = Registry::builtin();
    assert!(!few.extend_for(&mut listed, Disclosure::Auto, 8192));
    assert!(listed.get(TOOL_SEARCH).is_none());
    assert!(!listed.get("crashy__starts").unwrap().deferred());
    // `search` defers them all the same.
    let mut searched = Registry::builtin();
    assert!(few.extend_for(&mut searched, Disclosure::Search, 8192));
    assert!(searched.get(TOOL_SEARCH).is_some());
    few.shutdown().await;
}

/// A free loopback port (bound once, then released for the server to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_over_streamable_http_answers_calls() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let port = free_port();
    let script = mcp_servers_dir()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let mut server = tokio::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Ready once it says it listens.
    let stderr = server.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let ready = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("listening on port") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "the HTTP server did not start");
    let config = rein_mcp::config::from_flag(&format!("web=http://127.0.0.1:{port}/mcp")).unwrap();
    let hub = McpHub::start(vec![config], dir.path()).await;
    let (started, count, detail) = start_detail(&hub, "web");
    assert!(started && count >= 10, "{count}: {detail}");
    let outcome = call(
        tool(&hub, "web__echo"),
        json!({"message": "over http"}),
        &workspace,
    )
    .await;
    assert_eq!(outcome.text, "Echo: over http", "{outcome:?}");
    hub.shutdown().await;
    // Nothing listens on a port the server released: a one-line reason.
    let gone =
        rein_mcp::config::from_flag(&format!("gone=http://127.0.0.1:{}/mcp", free_port())).unwrap();
    let hub = McpHub::start(vec![gone], dir.path()).await;
    let (started, _, detail) = start_detail(&hub, "gone");
    assert!(!started && !detail.contains('\n'), "{detail}");
    server.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_in_flight_when_a_server_dies_start_it_again_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let hub = McpHub::start(vec![crashy()], dir.path()).await;
    let nap = tool(&hub, "crashy__nap");
    let crash = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        call(tool(&hub, "crashy__crash"), json!({}), &workspace).await
    };
    let (first, second, crashed) = tokio::join!(
        call(nap, json!({"seconds": 20}), &workspace),
        call(nap, json!({"seconds": 20}), &workspace),
        crash
    );
    for outcome in [&first, &second, &crashed] {
        assert!(
            !outcome.ok && outcome.text.contains("stopped during the call"),
            "{outcome:?}"
        );
    }
    // One death, one restart: the server is running, started twice.
    let starts = call(tool(&hub, "crashy__starts"), json!({}), &workspace).await;
    assert_eq!(starts.text, "started 2 times", "{starts:?}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_server_serves_the_tools_of_its_api_file_with_canned_replies() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = workspace(&dir);
    let api = json!({
        "name": "api",
        "tools": [
            {
                "name": "find_customer",
                "description": "Find a customer's id by their email address.",
                "parameters": {
                    "type": "object",
                    "properties": {"email": {"type": "string", "description": "the email"}},
                    "required": ["email"]
                },
                "cases": [{"when": {"email": "amara@example.com"}, "result": "customer id CUS-4821"}],
                "result": "no customer with that email",
                "read_only": true
            },
            {
                "name": "refund_order",
                "description": "Refund an order.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "customer_id": {"type": "string"},
                        "amount": {"type": "number"},
                        "items": {"type": "integer"},
                        "notify": {"type": "boolean"},
                        "speed": {"type": "string", "enum": ["standard", "express"]}
                    },
                    "required": ["customer_id", "items"]
                },
                "cases": [{"when": {"customer_id": "CUS-4821", "items": 2}, "result": "refunded, confirmation RF-77Q"}],
                "result": "no such customer"
            }
        ]
    });
    let file = dir.path().join("api.json");
    std::fs::write(&file, api.to_string()).unwrap();
    let config = node_server("api", "generated.mjs", &[file.to_str().unwrap()]);
    let hub = McpHub::start(vec![config], dir.path()).await;
    let (started, count, detail) = start_detail(&hub, "api");
    assert!(started && count == 2, "{count} tools: {detail}");

    let find = tool(&hub, "api__find_customer");
    assert!(find.read_only());
    let refund = tool(&hub, "api__refund_order");
    assert!(!refund.read_only());
    let schema = refund.spec().function.parameters.unwrap();
    assert_eq!(schema["properties"]["items"]["type"], "integer", "{schema}");
    assert!(
        schema["properties"]["items"].get("minimum").is_none(),
        "{schema}"
    );
    assert_eq!(
        schema["properties"]["notify"]["type"], "boolean",
        "{schema}"
    );
    assert_eq!(
        schema["properties"]["speed"]["enum"],
        json!(["standard", "express"])
    );
    let required = schema["required"].as_array().unwrap();
    assert!(required.contains(&json!("items")) && !required.contains(&json!("notify")));

    let found = call(find, json!({"email": "amara@example.com"}), &workspace).await;
    assert!(found.ok, "{found:?}");
    assert_eq!(found.text, "customer id CUS-4821");
    let other = call(find, json!({"email": "bruno@example.com"}), &workspace).await;
    assert_eq!(other.text, "no customer with that email", "{other:?}");
    // A case matches a subset of the arguments, numbers by value.
    let refunded = call(
        refund,
        json!({"customer_id": "CUS-4821", "items": 2.0, "notify": true}),
        &workspace,
    )
    .await;
    assert_eq!(
        refunded.text, "refunded, confirmation RF-77Q",
        "{refunded:?}"
    );
    let by_name = call(
        refund,
        json!({"customer_id": "amara@example.com", "items": 2}),
        &workspace,
    )
    .await;
    assert_eq!(by_name.text, "no such customer", "{by_name:?}");
    hub.shutdown().await;
}
