//! No trace holds rein's API key: a run whose model asks the shell for the whole
//! environment (and for the key by name) writes a trace without it. Its own test
//! binary: it sets the key in its process before anything runs.

use std::time::Duration;

use rein_agent::{Agent, Profile, RunConfig};
use rein_protocol::TraceWriter;
use rein_test_support::ScriptedBackend;
use rein_tools::{Registry, ToolLimits, Workspace};

#[test]
fn a_run_that_prints_the_environment_leaves_no_key_in_its_trace() {
    const KEY: &str = "sk-rein-trace-3b7d0c41";
    std::env::set_var("OPENAI_API_KEY", KEY);
    std::env::set_var("REIN_TEST_REMOTE", KEY);
    let dir = tempfile::tempdir().unwrap();
    let call = |command: &str| {
        format!(
            "<tool_call>\n{{\"name\": \"shell\", \"arguments\": {{\"command\": \"{command}\"}}}}\n</tool_call>"
        )
    };
    let replies = vec![
        call("env"),
        call("echo $OPENAI_API_KEY $REIN_TEST_REMOTE; cat /proc/$PPID/environ"),
        "The environment is listed above.".to_string(),
    ];
    let workspace = Workspace::new(
        dir.path(),
        ToolLimits {
            shell_timeout: Duration::from_secs(10),
            ..ToolLimits::default()
        },
    )
    .unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.grounding_check = false;
    let mut agent = Agent::new(
        ScriptedBackend::new(replies, true),
        workspace,
        &Registry::builtin(),
        config,
    )
    .unwrap();
    let trace_dir = tempfile::tempdir().unwrap();
    let trace_path = trace_dir.path().join("run.jsonl");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(agent.run(
        "List the environment variables.",
        Some(TraceWriter::create(&trace_path).unwrap()),
    ));
    assert!(result.tool_calls >= 2, "{result:?}");
    let trace = std::fs::read_to_string(&trace_path).unwrap();
    assert!(trace.contains("PATH="), "the shell ran: {trace}");
    assert!(!trace.contains(KEY), "the key is in the trace");
}
