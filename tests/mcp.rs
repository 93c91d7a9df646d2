//! `rein run` with MCP servers end to end: the reference servers (tests/mcp-servers,
//! installed by scripts/setup.sh) declared with `--mcp` and in the workspace's
//! `rein.toml`, the real tiny model, the trace; and no server process outlives a
//! `rein run` killed with SIGKILL or interrupted with SIGINT.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rein_protocol::{read_trace, RunEvent};
use rein_test_support::{mcp_server_script, processes_with};

use crate::support::{rein, stderr, tiny_model, NO_USER_CONFIG};

fn everything_script() -> String {
    mcp_server_script("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

fn filesystem_script() -> String {
    mcp_server_script("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

#[test]
fn rein_run_offers_the_tools_of_servers_from_the_flag_and_the_workspace_config() {
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(docs.path().join("code.txt"), "PG-4471\n").unwrap();
    std::fs::write(
        dir.path().join("rein.toml"),
        format!(
            "[mcp.servers.fs]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
            filesystem_script(),
            docs.path().display().to_string()
        ),
    )
    .unwrap();
    let traces = tempfile::tempdir().unwrap();
    let trace = traces.path().join("run.jsonl");
    let flag = format!("ev=node '{}' stdio", everything_script());
    let out = rein(&[
        "run",
        "--model",
        "tiny",
        "--no-pull",
        "--workdir",
        dir.path().to_str().unwrap(),
        "--max-turns",
        "2",
        "--reply-tokens",
        "96",
        "--trace",
        trace.to_str().unwrap(),
        "--mcp",
        &flag,
        "--mcp",
        "broken=/nonexistent/mcp-server",
        "--mcp-disclosure",
        "all",
        "Use the fs tools to read code.txt and tell me the code.",
    ]);
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("mcp: ev: "), "{log}");
    assert!(log.contains("mcp: fs: "), "{log}");
    assert!(
        log.contains("mcp: broken is not used: cannot start `/nonexistent/mcp-server`"),
        "{log}"
    );
    let events = read_trace(&trace).unwrap();
    let started: Vec<(String, bool, usize)> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolServer {
                server,
                started,
                tools,
                ..
            } => Some((server.clone(), *started, *tools)),
            _ => None,
        })
        .collect();
    assert_eq!(started.len(), 3, "{started:?}");
    assert!(started
        .iter()
        .any(|(s, ok, n)| s == "ev" && *ok && *n >= 10));
    assert!(started
        .iter()
        .any(|(s, ok, n)| s == "fs" && *ok && *n >= 10));
    assert!(started
        .iter()
        .any(|(s, ok, n)| s == "broken" && !*ok && *n == 0));
    let offered = events
        .iter()
        .find_map(|event| match event {
            RunEvent::RunStart { tools, .. } => Some(tools.clone()),
            _ => None,
        })
        .expect("a run start");
    for name in ["read_file", "shell", "ev__echo", "fs__read_text_file"] {
        assert!(
            offered.iter().any(|t| t == name),
            "{name} not in {offered:?}"
        );
    }
    assert!(offered.iter().all(|t| !t.starts_with("broken__")));
    // The servers' standard error went to the trace after the run, not the terminal.
    let end = events
        .iter()
        .position(|e| matches!(e, RunEvent::RunEnd { .. }))
        .expect("a run end");
    let logs: Vec<&RunEvent> = events
        .iter()
        .filter(|e| matches!(e, RunEvent::ServerLog { .. }))
        .collect();
    assert!(!logs.is_empty(), "no server log in the trace");
    assert!(events
        .iter()
        .skip(end)
        .any(|e| matches!(e, RunEvent::ServerLog { .. })));
    assert!(!log.contains("Starting default (STDIO) server"), "{log}");

    // By default 27 server tools (over 24) are kept behind `tool_search`.
    let out = rein(&[
        "run",
        "--model",
        "tiny",
        "--no-pull",
        "--workdir",
        dir.path().to_str().unwrap(),
        "--max-turns",
        "1",
        "--reply-tokens",
        "16",
        "--trace",
        trace.to_str().unwrap(),
        "--mcp",
        &flag,
        "Say hello.",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let offered = read_trace(&trace)
        .unwrap()
        .into_iter()
        .find_map(|event| match event {
            RunEvent::RunStart { tools, .. } => Some(tools),
            _ => None,
        })
        .expect("a run start");
    assert!(offered.iter().any(|t| t == "tool_search"), "{offered:?}");
    assert!(!offered.iter().any(|t| t.contains("__")), "{offered:?}");

    // --no-mcp-config leaves the workspace's servers out.
    let out = rein(&[
        "run",
        "--model",
        "tiny",
        "--no-pull",
        "--workdir",
        dir.path().to_str().unwrap(),
        "--max-turns",
        "1",
        "--reply-tokens",
        "16",
        "--trace",
        trace.to_str().unwrap(),
        "--no-mcp-config",
        "Say hello.",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let events = read_trace(&trace).unwrap();
    assert!(!events
        .iter()
        .any(|e| matches!(e, RunEvent::ToolServer { .. })));
}

/// Starts `rein run` with a server that would outlive it, sends rein `signal` once the
/// server runs, and checks that no process of the server is left.
fn no_server_process_outlives_rein_after(signal: &str) {
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("rein-orphan-check-{signal}-{}", std::process::id());
    // The server is a grandchild of rein (the shell does not exec it), beside a
    // process that never reads its input, so it outlives rein unless it is killed.
    let flag = format!(
        "ev=sh -c \"node -e 'setInterval(() => {{}}, 1000)' {marker}-idle & node '{}' stdio {marker}; wait\"",
        everything_script()
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_rein"));
    // A terminal's Ctrl-C reaches a process that takes SIGINT's default action; a test
    // run as a shell's background job inherits SIGINT ignored (POSIX shells ignore it
    // for background jobs), and rein would then run on to its end. The child gets the
    // default back before it starts.
    // SAFETY: `signal` is async-signal-safe, the one call made between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command
        .args(["run", "--model", "tiny", "--no-pull", "--max-turns", "30"])
        .args(["--reply-tokens", "512", "--workdir"])
        .arg(dir.path())
        .args(["--mcp", &flag])
        .arg("Count from one to one thousand in words, one number per line.")
        .env_remove("RUST_LOG")
        .env("REIN_NO_PROMPT_CACHE", "1")
        .env("REIN_CONFIG_DIR", NO_USER_CONFIG)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // `node` is the server's process; the shell's command line names the marker too.
    while processes_with(&format!("stdio\0{marker}")).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the server never started"
        );
        assert!(child.try_wait().unwrap().is_none(), "rein ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "rein ran on after {signal}: {status}");
    let signalled = Instant::now();
    while !processes_with(&marker).is_empty() && signalled.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        processes_with(&marker),
        Vec::<u32>::new(),
        "left running after {signal}"
    );
}

#[test]
fn a_killed_rein_run_leaves_no_server_process_behind() {
    // Killed at once, with no chance to clean up.
    no_server_process_outlives_rein_after("KILL");
}

#[test]
fn an_interrupted_rein_run_leaves_no_server_process_behind() {
    // Ctrl-C: the terminal sends SIGINT to rein's process group; the servers lead
    // groups of their own, so only rein gets it.
    no_server_process_outlives_rein_after("INT");
}

fn function(name: &str, description: &str, property: &str) -> rein_protocol::ToolSpec {
    rein_protocol::ToolSpec {
        kind: "function".into(),
        function: rein_protocol::FunctionSpec {
            name: name.into(),
            description: Some(description.into()),
            parameters: Some(serde_json::json!({
                "type": "object",
                "properties": {property: {"type": "string"}},
                "required": [property]
            })),
        },
    }
}

/// Two turns of one conversation on the real tiny model: the second adds
/// `revealed` to the tools, listed in the prompt or callable only; how many of the
/// second prompt's tokens came from the KV, and how long the first prompt was.
fn reuse_across_a_reveal(listed: bool) -> (usize, usize) {
    use rein_engine::{Backend, NoEvents, Sampling, TurnRequest};
    use rein_format::ToolSet;
    use rein_protocol::Message;

    let (runtime, engine) = crate::support::tiny_engine(4096);
    runtime.block_on(async {
        let mut backend = rein_llama::LocalBackend::new(&engine).await.unwrap();
        let shown = vec![
            function("read_file", "Read a text file of the workspace.", "path"),
            function("tool_search", "Find tools by what they do.", "query"),
        ];
        let revealed = function(
            "crm__find_customer",
            "Look up a customer by email.",
            "email",
        );
        let request = |messages: Vec<Message>, tools: ToolSet| TurnRequest {
            tools: Some(std::sync::Arc::new(tools)),
            sampling: Sampling {
                temperature: 0.0,
                ..Sampling::default()
            },
            max_tokens: Some(12),
            ..TurnRequest::text(messages)
        };
        let mut messages = vec![
            Message::system("You are a helpful assistant with tools."),
            Message::user("Find the customer with the email ada@example.com."),
        ];
        let first = backend
            .complete(
                request(messages.clone(), ToolSet::prepare(&shown).unwrap()),
                &mut NoEvents,
            )
            .await
            .unwrap();
        messages.push(Message::assistant(first.text.clone()));
        messages.push(Message::user(
            "tool_search found: crm__find_customer(email: string) - Look up a customer by email.",
        ));
        let mut all = shown.clone();
        all.push(revealed);
        let tools = if listed {
            ToolSet::prepare(&all).unwrap()
        } else {
            ToolSet::prepare_listing(&all, shown.len()).unwrap()
        };
        assert!(tools.get("crm__find_customer").is_some());
        let second = backend
            .complete(request(messages, tools), &mut NoEvents)
            .await
            .unwrap();
        (second.reused_tokens, first.prompt_tokens)
    })
}

#[test]
fn a_revealed_tool_keeps_the_prompts_cached_prefix() {
    let _model = rein_test_support::model_lock();
    tiny_model();
    let (reused, before) = reuse_across_a_reveal(false);
    assert!(
        reused >= before,
        "reused {reused} tokens of the {before}-token prompt before the reveal"
    );
    // Listing the tool instead rewrites the tool block at the prompt's front.
    let (reused_listed, before_listed) = reuse_across_a_reveal(true);
    assert!(
        reused_listed < before_listed,
        "listing the revealed tool reused {reused_listed} of {before_listed} tokens"
    );
}

/// The agent loop with the reference filesystem server behind `tool_search` and a
/// scripted model: a read refused outside the workspace names the server's read tool
/// and reveals it, and the real server returns the file (decision 0030).
#[test]
fn a_read_refused_outside_the_workspace_goes_on_through_the_filesystem_server() {
    use rein_agent::{Agent, Profile, RunConfig};
    use rein_tools::{Registry, ToolLimits, Workspace};

    let dir = tempfile::tempdir().unwrap();
    let docs = tempfile::tempdir().unwrap();
    let notes = docs.path().join("release.md");
    std::fs::write(&notes, "## 0.4.2\nOwner: Priya Raman.\n").unwrap();
    let notes = notes.display().to_string();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let config = rein_mcp::config::from_flag(&format!(
        "fs=node '{}' '{}'",
        filesystem_script(),
        docs.path().display()
    ))
    .unwrap();
    let hub = runtime.block_on(rein_mcp::McpHub::start(vec![config], dir.path()));
    assert!(hub.failures().is_empty(), "{:?}", hub.failures());
    let mut registry = Registry::builtin();
    assert!(hub.extend_for(&mut registry, rein_mcp::Disclosure::Search, 4096));
    let read = |tool: &str| {
        format!("<tool_call>\n{{\"name\": \"{tool}\", \"arguments\": {{\"path\": \"{notes}\"}}}}\n</tool_call>")
    };
    let backend = rein_test_support::ScriptedBackend::new(
        vec![
            read("read_file"),
            read("fs__read_text_file"),
            "The notes announce 0.4.2.".into(),
        ],
        true,
    );
    let workspace = Workspace::new(dir.path(), ToolLimits::default()).unwrap();
    let mut agent =
        Agent::new(backend, workspace, &registry, RunConfig::new(Profile::Full)).unwrap();
    assert!(!agent.tool_names().iter().any(|t| t == "fs__read_text_file"));
    let task = format!("Which version do the notes at {notes} announce?");
    let result = runtime.block_on(agent.run(&task, None));
    runtime.block_on(hub.shutdown());
    assert_eq!(result.answer.as_deref(), Some("The notes announce 0.4.2."));
    let requests = &agent.backend().requests;
    assert_eq!(requests.len(), 3);
    let last_result = |index: usize| {
        requests[index]
            .request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == rein_protocol::Role::Tool)
            .and_then(|m| m.content.clone())
            .unwrap_or_default()
    };
    let refused = last_result(1);
    assert!(
        refused.contains("is outside the workspace")
            && refused.contains("`fs__read_text_file` does this job"),
        "{refused}"
    );
    // The server's own result: the file as it is on disk.
    let read_back = last_result(2);
    assert!(read_back.contains("Owner: Priya Raman."), "{read_back}");
    assert_eq!((result.tool_calls, result.tool_errors), (2, 1));
}
