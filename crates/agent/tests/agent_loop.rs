//! The loop's logic with a scripted backend and the real tools on real files: every
//! stop reason, every recovery class, batch ordering, the verification guard, traces
//! and the four profiles.

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
    let backend = ScriptedBackend::new(replies, native);
    let mut agent = Agent::new(backend, workspace(dir), &Registry::builtin(), config).unwrap();
    let trace_dir = tempfile::tempdir().unwrap();
    let trace_path = trace_dir.path().join("run.jsonl");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(agent.run(
        "do the task",
        Some(TraceWriter::create(&trace_path).unwrap()),
    ));
    let events = read_trace(&trace_path).unwrap();
    Run {
        result,
        agent,
        events,
        _trace_dir: trace_dir,
    }
}

fn run(dir: &Path, replies: Vec<String>) -> Run {
    run_with(dir, replies, true, RunConfig::new(Profile::Full))
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

fn recoveries(events: &[TraceEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::Recovery { class, .. } => Some(class.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_plain_answer_ends_the_run_and_a_call_advances_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the secret is 42\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            call("read_file", r#"{"path": "notes.txt"}"#),
            "The secret is 42.".into(),
        ],
    );
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(r.result.answer.as_deref(), Some("The secret is 42."));
    assert_eq!(
        (r.result.turns, r.result.tool_calls, r.result.tool_errors),
        (2, 1, 0)
    );
    let second = &r.agent.backend().requests[1].messages;
    let result = second.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result
        .content
        .as_deref()
        .unwrap()
        .contains("the secret is 42"));
    assert_eq!(result.tool_call_id.as_deref(), Some("call_1"));
    assert!(second
        .iter()
        .any(|m| m.role == Role::Assistant && m.tool_calls.len() == 1));
    // The native template gets the definitions; the grammar is lazy.
    let first = &r.agent.backend().requests[0];
    assert!(first.tools.as_ref().unwrap().len() >= 6);
    assert_eq!(
        first.grammar.as_ref().unwrap().lazy_triggers,
        vec!["<tool_call>"]
    );
    assert!(matches!(
        r.events.first(),
        Some(TraceEvent::RunStart { .. })
    ));
    assert!(matches!(r.events.last(), Some(TraceEvent::RunEnd { .. })));
    for event in &r.events {
        assert!(!event.render().is_empty());
    }
}

#[test]
fn unreadable_output_is_dropped_and_retried_with_a_note_until_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let broken =
        "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": [1]}\n</tool_call>".to_string();
    let r = run(dir.path(), vec![broken.clone(), "Done.".into()]);
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(recoveries(&r.events), vec!["format"]);
    let retry = seen(&r, 1);
    assert!(
        !retry.contains("\"arguments\": [1]"),
        "the broken reply is not kept: {retry}"
    );
    assert!(retry.contains("could not be read"), "{retry}");
    assert_eq!(
        r.agent.backend().requests[1].messages.len(),
        3,
        "clean context plus one note"
    );

    let r = run(dir.path(), vec![broken; 5]);
    assert_eq!(r.result.stop_reason, StopReason::RecoveryExhausted);
    assert_eq!(r.result.detail.as_deref(), Some("format"));
    assert_eq!(r.result.turns, 4);
}

#[test]
fn unknown_tools_are_repaired_when_obvious_else_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            call("Read-File", r#"{"path": "a.txt"}"#),
            call("cat", r#"{"path": "a.txt"}"#),
            call("", r#"{}"#),
            "ok".into(),
        ],
    );
    assert!(r.events.iter().any(|e| matches!(e, TraceEvent::NameRepaired { from, to, .. } if from == "Read-File" && to == "read_file")));
    assert_eq!(r.result.tool_calls, 1);
    assert_eq!(recoveries(&r.events), vec!["unknown_tool", "unknown_tool"]);
    let after_cat = seen(&r, 2);
    assert!(
        after_cat.contains("There is no tool `cat`. The tools are: read_file"),
        "{after_cat}"
    );
    let after_blank = seen(&r, 3);
    assert!(after_blank.contains("had no tool name"), "{after_blank}");
    assert!(
        !after_blank.contains("There is no tool `cat`"),
        "one note at a time"
    );
}

#[test]
fn schema_violations_name_the_parameter_and_are_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        dir.path(),
        vec![
            call("write_file", r#"{"path": "x.txt"}"#),
            call("read_file", r#"{"path": "x.txt", "offset": "2"}"#),
            "ok".into(),
        ],
    );
    assert!(!dir.path().join("x.txt").exists());
    assert_eq!(recoveries(&r.events)[0], "schema");
    let note = seen(&r, 1);
    assert!(
        note.contains("write_file") && note.contains("content"),
        "{note}"
    );
    // "2" for an integer is coerced, not refused.
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::Coerced { tool, .. } if tool == "read_file")));
}

#[test]
fn tool_failures_and_timeouts_are_results_and_repeats_get_a_nudge() {
    let dir = tempfile::tempdir().unwrap();
    let missing = call("read_file", r#"{"path": "nope.txt"}"#);
    let r = run(
        dir.path(),
        vec![
            missing.clone(),
            missing,
            call("shell", r#"{"command": "sleep 5"}"#),
            "gave up".into(),
        ],
    );
    assert_eq!(r.result.tool_calls, 3);
    assert_eq!(r.result.tool_errors, 3);
    assert_eq!(
        recoveries(&r.events),
        vec!["tool_failure", "repetition", "tool_timeout"]
    );
    let nudge = seen(&r, 2);
    assert!(nudge.contains("Change approach"), "{nudge}");
    let runs = r
        .events
        .iter()
        .filter(|e| {
            matches!(
                e,
                TraceEvent::ToolResult {
                    timed_out: true,
                    ..
                }
            )
        })
        .count();
    assert_eq!(runs, 1);
}

#[test]
fn a_truncated_call_is_retried_with_double_allowance_at_most_four_times() {
    let dir = tempfile::tempdir().unwrap();
    let mut backend = ScriptedBackend::new(Vec::<String>::new(), true);
    for _ in 0..5 {
        backend.push_cut_off("<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"aaaa");
    }
    let mut agent = Agent::new(
        backend,
        workspace(dir.path()),
        &Registry::builtin(),
        RunConfig::new(Profile::Full),
    )
    .unwrap();
    let result = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(agent.run("write", None));
    assert_eq!(result.stop_reason, StopReason::RecoveryExhausted);
    assert_eq!(result.detail.as_deref(), Some("truncated"));
    let allowances: Vec<u32> = agent
        .backend()
        .requests
        .iter()
        .map(|r| r.max_tokens)
        .collect();
    assert_eq!(allowances, vec![1024, 2048, 4096, 4096]);
    // Same context each time, no partial call executed.
    assert!(agent
        .backend()
        .requests
        .iter()
        .all(|r| r.messages.len() == 2));
    assert!(!dir.path().join("a").exists());
}

#[test]
fn batches_run_reads_together_and_wait_for_earlier_writes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.txt"), "bee\n").unwrap();
    let reply = [
        call(
            "write_file",
            r#"{"path": "a.txt", "content": "written first"}"#,
        ),
        call("read_file", r#"{"path": "b.txt"}"#),
        call("read_file", r#"{"path": "a.txt"}"#),
        call("shell", r#"{"command": "cat a.txt"}"#),
        call("list_dir", r#"{"path": "."}"#),
    ]
    .join("\n");
    let r = run(dir.path(), vec![reply, "done".into()]);
    let groups: Vec<(String, usize)> = r
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { name, group, .. } => Some((name.clone(), *group)),
            _ => None,
        })
        .collect();
    let group_of = |i: usize| groups[i].1;
    assert_eq!(group_of(0), group_of(1), "{groups:?}");
    assert!(
        group_of(2) > group_of(0),
        "the read of a.txt waits for its write: {groups:?}"
    );
    assert!(
        group_of(3) > group_of(2) && group_of(4) > group_of(3),
        "shell is a barrier: {groups:?}"
    );
    let after = seen(&r, 1);
    assert!(after.contains("written first"), "{after}");
    // Shell output is outside text: wrapped.
    assert!(after.contains("<untrusted-data>"), "{after}");
}

#[test]
fn the_verification_guard_holds_the_answer_after_source_edits() {
    let dir = tempfile::tempdir().unwrap();
    let edit = call(
        "write_file",
        r#"{"path": "app.py", "content": "print(1)\n"}"#,
    );
    let r = run(
        dir.path(),
        vec![
            edit.clone(),
            "Done.".into(),
            "Done.".into(),
            "Done, really.".into(),
        ],
    );
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(r.result.answer.as_deref(), Some("Done, really."));
    let held = r
        .events
        .iter()
        .filter(|e| matches!(e, TraceEvent::VerificationRequested { .. }))
        .count();
    assert_eq!(held, 2, "at most twice");
    assert!(seen(&r, 2).contains("Before you finish: you changed app.py"));

    // A test run clears it; a non-source file never sets it.
    let r = run(
        dir.path(),
        vec![
            edit,
            call("shell", r#"{"command": "python3 -m pytest -q || true"}"#),
            call("write_file", r#"{"path": "NOTES.md", "content": "x"}"#),
            "Done.".into(),
        ],
    );
    assert_eq!(r.result.turns, 4);
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::VerificationRequested { .. })));
}

#[test]
fn budgets_stop_the_run_with_their_own_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let looping = vec![
        call("list_dir", r#"{"path": "."}"#),
        call("list_dir", r#"{}"#),
        call("list_dir", r#"{"path": "./"}"#),
    ];
    let mut config = RunConfig::new(Profile::Full);
    config.max_turns = 2;
    let r = run_with(dir.path(), looping.clone(), true, config);
    assert_eq!(
        (r.result.stop_reason, r.result.turns),
        (StopReason::MaxTurns, 2)
    );

    let mut config = RunConfig::new(Profile::Full);
    config.max_tokens = 5;
    let r = run_with(dir.path(), looping.clone(), true, config);
    assert_eq!(r.result.stop_reason, StopReason::MaxTokens);

    let mut config = RunConfig::new(Profile::Full);
    config.wall_clock = Duration::ZERO;
    let r = run_with(dir.path(), looping, true, config);
    assert_eq!(
        (r.result.stop_reason, r.result.turns),
        (StopReason::WallClock, 0)
    );

    let r = run(dir.path(), vec![]);
    assert_eq!(r.result.stop_reason, StopReason::BackendError);
    assert!(r.result.detail.unwrap().contains("no more replies"));
}

#[test]
fn emulated_calling_teaches_the_format_and_rewrites_history() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with(
        dir.path(),
        vec![call("list_dir", r#"{"path": "."}"#), "empty".into()],
        false,
        RunConfig::new(Profile::Full),
    );
    let first = &r.agent.backend().requests[0];
    assert!(first.tools.is_none());
    assert!(first.messages[0]
        .content
        .as_deref()
        .unwrap()
        .contains("\"name\":\"read_file\""));
    let second = &r.agent.backend().requests[1].messages;
    assert!(second
        .iter()
        .all(|m| m.role != Role::Tool && m.tool_calls.is_empty()));
    assert!(second.iter().any(|m| m
        .content
        .as_deref()
        .unwrap_or_default()
        .contains("<tool_response>")));
}

#[test]
fn the_emulated_tool_format_overrides_a_native_template() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.tool_format = rein_format::ToolFormat::Emulated;
    let r = run_with(
        dir.path(),
        vec![call("list_dir", r#"{"path": "."}"#), "empty".into()],
        true,
        config,
    );
    let first = &r.agent.backend().requests[0];
    assert!(first.tools.is_none());
    assert!(first.messages[0]
        .content
        .as_deref()
        .unwrap()
        .contains("<tool_call>"));
    assert!(first.grammar.is_some());
    let second = &r.agent.backend().requests[1].messages;
    assert!(second
        .iter()
        .all(|m| m.role != Role::Tool && m.tool_calls.is_empty()));
    assert_eq!(r.result.tool_calls, 1);
}

#[test]
fn naive_reads_call_shaped_json_loosely_without_grammar_or_retry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_with(
        dir.path(),
        vec![
            "```json\n{\"function\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}\n```"
                .into(),
            "{\"name\": \"cat\", \"arguments\": {}}".into(),
            "It says alpha.".into(),
        ],
        true,
        RunConfig::new(Profile::Naive),
    );
    assert_eq!(r.result.answer.as_deref(), Some("It says alpha."));
    assert_eq!((r.result.tool_calls, r.result.tool_errors), (2, 1));
    let first = &r.agent.backend().requests[0];
    assert!(first.grammar.is_none() && first.tools.is_none());
    assert!(recoveries(&r.events).iter().all(|c| c == "tool_failure"));
}

#[test]
fn react_parses_actions_and_feeds_observations() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_with(
        dir.path(),
        vec![
            "Thought: read it\nAction: read_file\nAction Input: {\"path\": \"a.txt\"}".into(),
            "I am not sure.".into(),
            "Thought: done\nFinal Answer: alpha".into(),
        ],
        true,
        RunConfig::new(Profile::React),
    );
    assert_eq!(r.result.answer.as_deref(), Some("alpha"));
    let second = seen(&r, 1);
    assert!(
        second.contains("Observation:") && second.contains("alpha"),
        "{second}"
    );
    let third = seen(&r, 2);
    assert!(third.contains("Observation: Invalid format"), "{third}");
    assert_eq!(
        r.agent.backend().requests[0].stop,
        vec!["\nObservation:", "Observation:"]
    );
}

#[test]
fn structured_forces_calls_and_finishes_through_the_finish_tool() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with(
        dir.path(),
        vec![
            "plain text is not allowed".into(),
            call("finish", r#"{"answer": "all done"}"#),
        ],
        true,
        RunConfig::new(Profile::Structured),
    );
    assert_eq!(r.result.stop_reason, StopReason::Finished);
    assert_eq!(r.result.answer.as_deref(), Some("all done"));
    let first = &r.agent.backend().requests[0];
    assert!(
        first.grammar.as_ref().unwrap().lazy_triggers.is_empty(),
        "every reply is a call"
    );
    // Blind retry: no note, the same context.
    assert_eq!(r.agent.backend().requests[1].messages.len(), 2);
}

#[test]
fn a_reply_that_is_only_bare_json_calls_runs_them_without_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}".into(),
            "It says alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("It says alpha."));
    assert!(recoveries(&r.events).is_empty());
    assert_eq!(r.result.tool_calls, 1);
    assert_eq!(r.agent.backend().requests.len(), 2, "no retry turn");
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::FormatRepaired { .. })));
    // A made-up name whose arguments fit exactly one tool's schema is that tool.
    let r = run(
        dir.path(),
        vec![
            "{\"name\": \"run_tests.sh\", \"arguments\": {\"command\": \"echo hi\"}}".into(),
            "Done.".into(),
        ],
    );
    assert_eq!(r.result.tool_calls, 1);
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::NameRepaired { to, .. } if to == "shell")));
    // An invented tool whose arguments fit several real ones is not run, and the
    // bare call is not taken as the answer: the retry names the real tools and must
    // be a call.
    let r = run(
        dir.path(),
        vec![
            "{\"name\": \"stats\", \"arguments\": {\"path\": \"a.txt\"}}".into(),
            call("read_file", r#"{"path": "a.txt"}"#),
            "Done.".into(),
        ],
    );
    assert_eq!(r.result.tool_calls, 1);
    assert_eq!(r.result.answer.as_deref(), Some("Done."));
    assert_eq!(recoveries(&r.events), vec!["unknown_tool"]);
    let retry = &r.agent.backend().requests[1];
    assert!(
        retry.grammar.as_ref().unwrap().lazy_triggers.is_empty(),
        "calls only"
    );
    assert!(
        seen(&r, 1).contains("read_file"),
        "the note lists the tools"
    );
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::FormatRepaired { .. })));
}

#[test]
fn a_call_in_another_format_is_retried_under_the_calls_only_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        dir.path(),
        vec![
            "<tools>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n</tools>".into(),
            call("list_dir", r#"{"path": "."}"#),
            "Empty.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("Empty."));
    assert_eq!(recoveries(&r.events), vec!["format"]);
    let requests = &r.agent.backend().requests;
    assert!(
        requests[1]
            .grammar
            .as_ref()
            .unwrap()
            .lazy_triggers
            .is_empty(),
        "forced"
    );
    assert!(
        !requests[2]
            .grammar
            .as_ref()
            .unwrap()
            .lazy_triggers
            .is_empty(),
        "lazy again"
    );
    let note = seen(&r, 1);
    assert!(
        note.contains(
            "<tool_call>\n{\"name\":\"list_dir\",\"arguments\":{\"path\":\".\"}}\n</tool_call>"
        ),
        "the model's own call, rightly written: {note}"
    );
    // An empty reply is not an answer.
    let r = run(dir.path(), vec!["".into(), "Nothing to do.".into()]);
    assert_eq!(r.result.answer.as_deref(), Some("Nothing to do."));
    assert_eq!(recoveries(&r.events), vec!["format"]);
    // A plain answer that merely contains JSON is still an answer.
    let r = run(dir.path(), vec!["The config is {\"debug\": true}.".into()]);
    assert_eq!(r.result.stop_reason, StopReason::Answered);
}

#[test]
fn old_tool_results_are_summarized_when_the_context_fills() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        let body: String = (0..200)
            .map(|l| format!("file {i} line {l} of filler text\n"))
            .collect();
        std::fs::write(dir.path().join(format!("f{i}.txt")), body).unwrap();
    }
    let mut replies: Vec<String> = (0..5)
        .map(|i| call("read_file", &format!(r#"{{"path": "f{i}.txt"}}"#)))
        .collect();
    replies.push("Read them all.".into());
    let backend = ScriptedBackend::new(replies, true).with_context(4096 + 2000);
    let mut agent = Agent::new(
        backend,
        workspace(dir.path()),
        &Registry::builtin(),
        RunConfig::new(Profile::Full),
    )
    .unwrap();
    let trace_dir = tempfile::tempdir().unwrap();
    let path = trace_dir.path().join("t.jsonl");
    let result = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(agent.run("read every file", Some(TraceWriter::create(&path).unwrap())));
    assert_eq!(result.stop_reason, StopReason::Answered);
    let events = read_trace(&path).unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e, TraceEvent::Compacted { summarized, .. } if *summarized > 0)));
    let last = &agent.backend().requests.last().unwrap().messages;
    assert_eq!(
        last[1].content.as_deref(),
        Some("read every file"),
        "the task stays verbatim"
    );
    let first_result = last.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(
        first_result
            .content
            .as_deref()
            .unwrap()
            .starts_with("[summarized:"),
        "{first_result:?}"
    );
    let newest = last.iter().rev().find(|m| m.role == Role::Tool).unwrap();
    assert!(
        newest
            .content
            .as_deref()
            .unwrap()
            .contains("file 4 line 100"),
        "recent results stay verbatim"
    );
}
