//! Every recovery class: unreadable output, unknown tools, schema violations, tool
//! failures and timeouts, truncated calls, calls in other formats, and the
//! verification guard.

use super::*;

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
    let r = run_ungrounded(
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
fn the_verification_guard_holds_the_answer_after_source_edits() {
    let dir = tempfile::tempdir().unwrap();
    let edit = call(
        "write_file",
        r#"{"path": "app.py", "content": "print(1)\n"}"#,
    );
    let r = run_ungrounded(
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

    // The report of the check run after the hold completes the held answer.
    let fresh = tempfile::tempdir().unwrap();
    let r = run_ungrounded(
        fresh.path(),
        vec![
            edit.clone(),
            "app.py now prints 1.".into(),
            // A check that ends at once (the shell's timeout here is one second).
            call("shell", r#"{"command": "make --version"}"#),
            "The project's check passed.".into(),
        ],
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("app.py now prints 1.\n\nThe project's check passed.")
    );

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
    let r = run_ungrounded(
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
    // bare call is not taken as the answer: the retry names the real tools.
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
    // Before any call ran, the retry is free: a request no tool fits may be
    // answered directly, and the note says so.
    let retry = &r.agent.backend().requests[1];
    assert!(
        !retry.grammar.as_ref().unwrap().lazy_triggers.is_empty(),
        "free decoding"
    );
    let note = seen(&r, 1);
    assert!(note.contains("read_file"), "the note lists the tools");
    assert!(note.contains("answer it directly"), "{note}");
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
            "I will run {\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}} for you.".into(),
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
    // One call: the retry is one call.
    assert!(!requests[1].request.parallel_calls);
    // Several calls in another format: the note shows them all, and the retry may
    // make them all.
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            "I will read {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}} and {\"name\": \"read_file\", \"arguments\": {\"path\": \"b.txt\"}} for you.".into(),
            format!(
                "{}\n{}",
                call("read_file", r#"{"path": "a.txt"}"#),
                call("read_file", r#"{"path": "b.txt"}"#)
            ),
            "alpha and beta.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("alpha and beta."));
    assert_eq!(recoveries(&r.events), vec!["format"]);
    let requests = &r.agent.backend().requests;
    assert!(requests[1].request.parallel_calls);
    assert_eq!(
        requests[1].request.choice,
        rein_protocol::ToolChoice::Required
    );
    let note = seen(&r, 1);
    assert!(
        note.contains("{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}}")
            && note.contains("{\"name\":\"read_file\",\"arguments\":{\"path\":\"b.txt\"}}"),
        "{note}"
    );
    assert_eq!(r.result.tool_calls, 2);
    // An empty reply is not an answer.
    let r = run(dir.path(), vec!["".into(), "Nothing to do.".into()]);
    assert_eq!(r.result.answer.as_deref(), Some("Nothing to do."));
    assert_eq!(recoveries(&r.events), vec!["format"]);
    // A plain answer that merely contains JSON is still an answer.
    let r = run(dir.path(), vec!["The config is {\"debug\": true}.".into()]);
    assert_eq!(r.result.stop_reason, StopReason::Answered);
}

#[test]
fn calls_in_the_models_own_wrappers_run_without_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            "<tools>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}\n</tools>".into(),
            "Let me read it.\n```json\n{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"a.txt\\\"}\"}\n```".into(),
            "<function=read_file>{\"path\": \"a.txt\", \"limit\": 1}</function>".into(),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), Vec::<String>::new());
    assert_eq!(r.result.tool_calls, 3);
    let repaired = r
        .events
        .iter()
        .filter(|e| matches!(e, TraceEvent::FormatRepaired { .. }))
        .count();
    assert_eq!(repaired, 3);
    // The text before a wrapped call stays the assistant's content.
    let history = &r.agent.backend().requests[2].messages;
    assert!(history
        .iter()
        .any(|m| m.content.as_deref() == Some("Let me read it.")));
}

#[test]
fn an_empty_reply_after_a_failed_call_says_what_failed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.py"), "timeout = 10\ntimeout = 10\n").unwrap();
    let edit = call(
        "edit_file",
        r#"{"path": "s.py", "old_string": "timeout = 10", "new_string": "timeout = 30"}"#,
    );
    let r = run_ungrounded(dir.path(), vec![edit, String::new(), "gave up".into()]);
    assert_eq!(recoveries(&r.events), vec!["tool_failure", "format"]);
    let note = seen(&r, 2);
    assert!(
        note.contains("Your last reply was empty. The last call failed: old_string occurs 2 times"),
        "{note}"
    );
    assert!(note.contains("The task is not done yet"), "{note}");
    // The retry is decoded as a call: asked the same way, a small model ends its reply
    // at once again.
    let requests = &r.agent.backend().requests;
    assert_eq!(requests[1].request.choice, rein_protocol::ToolChoice::Auto);
    assert_eq!(
        requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // With a call still waiting for the latest result, that call is the next step.
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let both = format!(
        "{}\n{}",
        call("read_file", r#"{"path": "a.txt"}"#),
        call("list_dir", r#"{"path": "."}"#)
    );
    let r = run_ungrounded(dir.path(), vec![both, String::new(), "done".into()]);
    let note = seen(&r, 2);
    assert!(
        note.contains("Your earlier reply also called `list_dir`, which has not run yet"),
        "{note}"
    );
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // With nothing failed, an empty reply may still be an answer to come: asked for
    // the answer itself, not for a claim that the task is done.
    let r = run(dir.path(), vec![String::new(), "done".into()]);
    assert!(seen(&r, 1).contains("reply with that answer, taken from them"));
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Auto
    );
}

#[test]
fn a_failed_call_runs_again_once_something_changed() {
    let dir = tempfile::tempdir().unwrap();
    let read = call("read_file", r#"{"path": "notes.txt"}"#);
    let r = run_ungrounded(
        dir.path(),
        vec![
            read.clone(),
            read.clone(),
            call(
                "write_file",
                r#"{"path": "notes.txt", "content": "alpha\n"}"#,
            ),
            read,
            "notes.txt holds alpha.".into(),
        ],
    );
    let outputs: Vec<String> = r
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { name, output, .. } if name == "read_file" => {
                Some(output.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 3);
    assert!(outputs[1].starts_with("You already made exactly this call and it failed"));
    // After the write, the same read is run again, and finds the file.
    assert!(outputs[2].contains("alpha"), "{}", outputs[2]);
}

#[test]
fn a_path_taken_for_the_workspace_root_gets_the_call_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let task = which_file_defines(dir.path());
    let r = run_full(
        dir.path(),
        task,
        vec![
            call(
                "search",
                r#"{"pattern": "userrepository", "path": "/workspace"}"#,
            ),
            call(
                "read_file",
                r#"{"path": "/home/user/project/store/accounts.py"}"#,
            ),
            call("read_file", r#"{"path": "/etc/hosts"}"#),
            "store/accounts.py".into(),
        ],
    );
    // What the model saw after each call (the trace's result event is the tool's
    // own output; the loop's additions reach the conversation).
    let last_result = |index: usize| {
        let turn = seen(&r, index);
        turn.rsplit("[Tool]").next().unwrap_or_default().to_string()
    };
    let first = last_result(1);
    assert!(
        first.contains("Paths are relative to the workspace root (`.`), not `/workspace`. The same call inside the workspace is:\n<tool_call>\n{\"name\":\"search\",\"arguments\":{\"pattern\":\"userrepository\",\"path\":\".\"}}"),
        "{first}"
    );
    let second = last_result(2);
    assert!(
        second.contains(r#"{"name":"read_file","arguments":{"path":"store/accounts.py"}}"#),
        "{second}"
    );
    // Nothing in the workspace is what it meant: the refusal alone.
    let third = last_result(3);
    assert!(
        third.contains("`/etc/hosts` is outside the workspace"),
        "{third}"
    );
    assert!(!third.contains("Paths are relative"), "{third}");
    assert_eq!(r.result.answer.as_deref(), Some("store/accounts.py"));
    // The trace holds each note after the tool's own output, as the model saw it.
    let notes: Vec<&str> = r
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ResultNote { note, .. } => Some(note.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(first.ends_with(notes[0].trim_end()), "{notes:?}\n{first}");
    assert!(notes[1].contains("store/accounts.py"), "{notes:?}");
}
