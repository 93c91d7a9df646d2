//! The loop's basic steps: an answer ends the run, a call advances it, batches run in
//! scheduled groups, and budgets stop the run with their own reasons.

use super::*;

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
    let triggers = &first.grammar.as_ref().unwrap().lazy_triggers;
    assert_eq!(triggers[0], "<tool_call>");
    assert!(
        triggers[1..].iter().all(|t| t.contains("read_file|")),
        "{triggers:?}"
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
    // Scheduling as such: stepwise calls (which would run only the first tool's) off.
    let mut config = RunConfig::new(Profile::Full);
    config.stepwise = false;
    let r = run_with(dir.path(), vec![reply, "done".into()], true, config);
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
fn a_prompt_the_backend_counts_too_long_is_compacted_and_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        let body: String = (0..200)
            .map(|l| format!("{l:04} 4821 9930 1174 5528 6603 2291 8847 3310\n"))
            .collect();
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let replies = vec![
        format!(
            "{}\n{}",
            call("read_file", r#"{"path": "a.txt"}"#),
            call("read_file", r#"{"path": "b.txt"}"#)
        ),
        "Both files hold numbers.".into(),
    ];
    // Digits cost a token each: the size model, measured on the prose of the first
    // prompt, guesses the second one (two results of numbers) well under what the
    // backend counts, and the backend refuses it.
    let backend = ScriptedBackend::new(replies, true)
        .with_context(12_500)
        .with_dense_digits();
    let mut config = RunConfig::new(Profile::Full);
    config.reply_tokens_cap = 256;
    let r = run_backend_task(dir.path(), "What do a.txt and b.txt hold?", backend, config);
    assert_eq!(
        r.result.stop_reason,
        StopReason::Answered,
        "{:?}",
        r.result.detail
    );
    assert_eq!(r.result.answer.as_deref(), Some("Both files hold numbers."));
    assert_eq!(r.result.turns, 2);
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 3, "the refused prompt is asked again once");
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::Compacted { summarized, .. } if *summarized > 0)));
    let results: Vec<&str> = requests[2]
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.as_deref())
        .collect();
    assert!(
        results
            .iter()
            .any(|r| r.starts_with("[summarized:") || r.starts_with("[cut:")),
        "{results:?}"
    );
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
    // Five results of about 1,500 tokens each in a 12k context: the estimate starts
    // at 0.45 tokens a character (real models on numbered file lines) and measures the
    // scripted backend's 0.25 from the second request on, so the fifth result is what
    // passes the trigger.
    let backend = ScriptedBackend::new(replies, true).with_context(12_096);
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
    let opening = agent.backend().requests[0].messages[1].content.clone();
    assert!(opening.as_deref().unwrap().ends_with("\n\nread every file"));
    assert_eq!(last[1].content, opening, "the task stays verbatim");
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
