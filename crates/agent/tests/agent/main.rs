//! The loop's logic with a scripted backend and the real tools on real files: every
//! stop reason, every recovery class, batch ordering, the verification guard, traces
//! and the four profiles. One test binary; the shared helpers are here.

mod answer_form;
mod focused;
mod focused_edit;
mod held_answers;
mod held_calls;
mod lookups;
mod non_answers;
mod opening;
mod output_file_plans;
mod output_files;
mod picks;
mod procedures;
mod profiles;
mod recovery;
mod repeats;
mod reveal;
mod steps;
mod writes;

use std::path::Path;
use std::time::Duration;

use rein_agent::{Agent, Profile, RunConfig};
use rein_protocol::{read_trace, Role, RunEvent as TraceEvent, RunResult, StopReason, TraceWriter};
use rein_test_support::ScriptedBackend;
use rein_tools::{Registry, ToolLimits, Workspace};
use tempfile::TempDir;

fn call(name: &str, args: &str) -> String {
    format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>")
}

fn workspace(dir: &Path) -> Workspace {
    Workspace::new(
        dir,
        ToolLimits {
            shell_timeout: Duration::from_secs(1),
            ..ToolLimits::default()
        },
    )
    .unwrap()
}

struct Run {
    result: RunResult,
    agent: Agent<ScriptedBackend>,
    events: Vec<TraceEvent>,
    _trace_dir: TempDir,
}

fn run_with(dir: &Path, replies: Vec<String>, native: bool, config: RunConfig) -> Run {
    run_task(dir, "do the task", replies, native, config)
}

fn run_task(dir: &Path, task: &str, replies: Vec<String>, native: bool, config: RunConfig) -> Run {
    run_backend_task(dir, task, ScriptedBackend::new(replies, native), config)
}

fn run_backend(dir: &Path, backend: ScriptedBackend, config: RunConfig) -> Run {
    run_backend_task(dir, "do the task", backend, config)
}

fn run_backend_task(dir: &Path, task: &str, backend: ScriptedBackend, config: RunConfig) -> Run {
    run_with_tools(dir, task, backend, &Registry::builtin(), config)
}

/// `run_backend_task` with the tools of `registry`.
fn run_with_tools(
    dir: &Path,
    task: &str,
    backend: ScriptedBackend,
    registry: &Registry,
    config: RunConfig,
) -> Run {
    let mut agent = Agent::new(backend, workspace(dir), registry, config).unwrap();
    let trace_dir = tempfile::tempdir().unwrap();
    let trace_path = trace_dir.path().join("run.jsonl");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(agent.run(task, Some(TraceWriter::create(&trace_path).unwrap())));
    let events = read_trace(&trace_path).unwrap();
    Run {
        result,
        agent,
        events,
        _trace_dir: trace_dir,
    }
}

fn run(dir: &Path, replies: Vec<String>) -> Run {
    run_full(dir, "do the task", replies)
}

/// `task` under the full profile, the replies in the native call format.
fn run_full(dir: &Path, task: &str, replies: Vec<String>) -> Run {
    run_task(dir, task, replies, true, RunConfig::new(Profile::Full))
}

/// `run` without the first-call grounding check, for scripts whose first call uses
/// values the generic task never gives (the check has its own tests).
fn run_ungrounded(dir: &Path, replies: Vec<String>) -> Run {
    let mut config = RunConfig::new(Profile::Full);
    config.grounding_check = false;
    run_with(dir, replies, true, config)
}

/// A workspace whose `store/accounts.py` defines `UserRepository`, and the question
/// that asks which file does.
fn which_file_defines(dir: &Path) -> &'static str {
    std::fs::create_dir_all(dir.join("store")).unwrap();
    std::fs::write(
        dir.join("store/accounts.py"),
        "class UserRepository:\n    pass\n",
    )
    .unwrap();
    "Which file defines the class named userrepository? Answer with the file's path."
}

/// The text of every message the model saw in request `index`.
fn seen(run: &Run, index: usize) -> String {
    run.agent.backend().requests[index]
        .messages
        .iter()
        .map(|m| {
            format!(
                "[{:?}] {}",
                m.role,
                m.content.as_deref().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The output of every tool result, in order.
fn tool_outputs(events: &[TraceEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect()
}

fn recoveries(events: &[TraceEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Recovery { class, .. } => Some(class.clone()),
            _ => None,
        })
        .collect()
}

/// The names of the tools that ran, in order.
fn tools_run(events: &[TraceEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// Each tool result of a run: its output and whether it succeeded.
fn tool_results(events: &[TraceEvent]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { output, ok, .. } => Some((output.clone(), *ok)),
            _ => None,
        })
        .collect()
}

/// `full` with the answer asked after the whole conversation, for tests that read the
/// notes it carries (`focused` tests the focused turn).
fn whole_context() -> RunConfig {
    let mut config = RunConfig::new(Profile::Full);
    config.focused_answer = false;
    config
}
