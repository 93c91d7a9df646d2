//! Calls of the `full` profile held or sent elsewhere: values nothing showed, a call
//! to no tool, calls that wait for another tool's result, a spray after an answer.

use super::*;

#[test]
fn a_plan_to_read_a_file_by_its_bare_name_gets_the_call_that_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("conf/prod")).unwrap();
    std::fs::write(dir.path().join("conf/prod/limits.toml"), "max = 480\n").unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        "{\"limits\": \"conf/prod/limits.toml\"}\n",
    )
    .unwrap();
    let r = run_task(
        dir.path(),
        "Read config.json, then the limits file it names, and tell me max.",
        vec![
            call("read_file", r#"{"path": "config.json"}"#),
            "To read the `limits.toml` file, I will follow these steps:\n\n1. **Read the `limits.toml` file**".into(),
            call("read_file", r#"{"path": "conf/prod/limits.toml"}"#),
            "max is 480.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("max is 480."));
    let note = seen(&r, 2);
    assert!(
        note.contains("The file you mean is most likely `conf/prod/limits.toml`; read it with:\n<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"conf/prod/limits.toml\"}}\n</tool_call>"),
        "{note}"
    );
}

#[test]
fn a_call_to_no_tool_after_a_step_that_worked_may_be_answered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    // A whole reply that is a call to a tool that does not exist.
    let bare = r#"{"name": "save_summary", "arguments": {"text": "alpha"}}"#.to_string();
    let r = run(
        dir.path(),
        vec![
            call("read_file", r#"{"path": "a.txt"}"#),
            bare.clone(),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["unknown_tool"]);
    let retry = &r.agent.backend().requests[2];
    assert_ne!(retry.request.choice, rein_protocol::ToolChoice::Required);
    assert!(seen(&r, 2).contains("If the task is already done, reply with the answer instead."));
    // Before any call ran, a call to nothing may mean no tool fits: the retry is
    // free, and the note says a direct answer is allowed.
    let r = run(dir.path(), vec![bare, "alpha is a Greek letter.".into()]);
    assert_eq!(r.result.answer.as_deref(), Some("alpha is a Greek letter."));
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Auto
    );
    assert!(seen(&r, 1).contains("If none of them fits the request, answer it directly"));
}

#[test]
fn a_first_call_with_values_the_request_never_gave_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    // "What is 12 times 12?" answered with a look at a file nobody named: held, and
    // the retry answers.
    let r = run_full(
        dir.path(),
        "What is 12 times 12?",
        vec![
            call("read_file", r#"{"path": "numbers/table.txt"}"#),
            "12 times 12 is 144.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("12 times 12 is 144."));
    assert_eq!(r.result.tool_calls, 0);
    assert_eq!(recoveries(&r.events), vec!["ungrounded"]);
    let note = seen(&r, 1);
    assert!(
        note.contains("does not mention \"numbers/table.txt\""),
        "{note}"
    );
    assert!(note.contains("answer it directly in plain words"), "{note}");
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Auto
    );
    // Held once only: the same call again runs.
    let again = call("read_file", r#"{"path": "numbers/table.txt"}"#);
    let r = run_full(
        dir.path(),
        "What is 12 times 12?",
        vec![again.clone(), again, "144".into()],
    );
    assert_eq!(r.result.tool_calls, 1);
    assert_eq!(recoveries(&r.events)[0], "ungrounded");
    // A value from the request, or a file the workspace has, runs at once.
    for (task, path) in [
        ("What does notes.txt say?", "notes.txt"),
        ("What is in the workspace?", "a.txt"),
    ] {
        let r = run_full(
            dir.path(),
            task,
            vec![
                call("read_file", &format!(r#"{{"path": "{path}"}}"#)),
                "ok".into(),
            ],
        );
        assert_eq!(r.result.tool_calls, 1, "{task}");
        assert!(
            !recoveries(&r.events).contains(&"ungrounded".to_string()),
            "{task}"
        );
    }
    // Off, the first call runs as written.
    let mut config = RunConfig::new(Profile::Full);
    config.grounding_check = false;
    let r = run_task(
        dir.path(),
        "What is 12 times 12?",
        vec![
            call("read_file", r#"{"path": "numbers/table.txt"}"#),
            "144".into(),
        ],
        true,
        config,
    );
    assert_eq!(r.result.tool_calls, 1);
}

#[test]
fn a_call_with_an_identifier_nothing_showed_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("orders.txt"), "ORD-88120\n").unwrap();
    // The listing and, in the same reply, a read of an id the model made up.
    let reply = format!(
        "{}\n{}",
        call("read_file", r#"{"path": "orders.txt"}"#),
        call("read_file", r#"{"path": "ORD-10000"}"#)
    );
    let r = run_task(
        dir.path(),
        "Read orders.txt, then read the file named after the first order id.",
        vec![
            reply,
            call("read_file", r#"{"path": "ORD-88120"}"#),
            "done".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    let results = tool_results(&r.events);
    assert!(results[0].1, "the listing ran: {results:?}");
    assert!(
        results[1].0.starts_with(
            "Not run: `ORD-10000` appears nowhere in the request or in any result so far"
        ),
        "{results:?}"
    );
    assert!(!results[1].1);
    // The id from the result is no guess: that call runs (and fails as a read).
    assert!(!results[2].0.starts_with("Not run"), "{results:?}");
    assert_eq!(recoveries(&r.events)[0], "guessed");
}

#[test]
fn a_call_that_failed_next_to_another_tools_success_may_need_its_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.txt"), "see notes/real.txt\n").unwrap();
    let reply = format!(
        "{}\n{}",
        call("read_file", r#"{"path": "index.txt"}"#),
        call("list_dir", r#"{"path": "notes"}"#)
    );
    // Without stepwise calls (which would not run the listing at all).
    let mut config = RunConfig::new(Profile::Full);
    config.stepwise = false;
    let r = run_task(
        dir.path(),
        "Read index.txt, then list the folder it names.",
        vec![reply, "done".into()],
        true,
        config,
    );
    let note = seen(&r, 1);
    assert!(
        note.contains(
            "(This call was made in the same reply as `read_file`, before its result existed."
        ),
        "{note}"
    );
}

#[test]
fn calls_of_other_tools_wait_for_the_first_tools_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.txt"), "see notes/real.txt\n").unwrap();
    std::fs::write(dir.path().join("other.txt"), "other\n").unwrap();
    let reply = [
        call("read_file", r#"{"path": "index.txt"}"#),
        call("list_dir", r#"{"path": "notes"}"#),
        call("read_file", r#"{"path": "other.txt"}"#),
        call("write_file", r#"{"path": "out.txt", "content": "guess"}"#),
    ]
    .join("\n");
    let r = run_task(
        dir.path(),
        "Read index.txt, then list the folder it names.",
        vec![reply, "done".into()],
        true,
        RunConfig::new(Profile::Full),
    );
    // Both reads ran; the listing and the write did not.
    let ran = tools_run(&r.events);
    assert_eq!(ran, ["read_file", "read_file"]);
    assert!(!dir.path().join("out.txt").exists());
    assert!(r.events.iter().any(|e| matches!(
        e,
        TraceEvent::CallsDeferred { tools, .. } if tools == &["list_dir", "write_file"]
    )));
    // The history holds the calls that ran, and the last result says what waited.
    let next = &r.agent.backend().requests[1].messages;
    let calls: Vec<&str> = next
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.function.name.as_str()))
        .collect();
    assert_eq!(calls, ["read_file", "read_file"]);
    let note = seen(&r, 1);
    assert!(
        note.contains("(Your reply also called `list_dir`, `write_file`; those calls were not run"),
        "{note}"
    );

    // A reply that opens with a call it already made leads with its first new one.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let list = call("list_dir", r#"{"path": "."}"#);
    let r = run_task(
        dir.path(),
        "List the folder, then read a.txt.",
        vec![
            list.clone(),
            [list, call("read_file", r#"{"path": "a.txt"}"#)].join("\n"),
            "a.txt holds alpha.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    let ran = tools_run(&r.events);
    assert_eq!(ran, ["list_dir", "read_file"]);
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::CallsDeferred { .. })));

    // With the setting off, every call runs.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.txt"), "x\n").unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.stepwise = false;
    let reply = [
        call("read_file", r#"{"path": "index.txt"}"#),
        call("write_file", r#"{"path": "out.txt", "content": "x"}"#),
    ]
    .join("\n");
    let r = run_task(
        dir.path(),
        "Read index.txt and copy it to out.txt.",
        vec![reply, "done".into()],
        true,
        config,
    );
    assert!(dir.path().join("out.txt").exists());
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::CallsDeferred { .. })));
}

#[test]
fn a_call_to_no_tool_in_a_task_naming_a_directory_is_sent_to_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("services/auth")).unwrap();
    std::fs::write(dir.path().join("services/auth/VERSION"), "1.0.0\n").unwrap();
    let r = run_full(
        dir.path(),
        "Every service under services/ has a VERSION file. Set the version of each one to 1.1.0.",
        vec![
            call("set_version", r#"{"version": "1.1.0"}"#),
            call("list_dir", r#"{"path": "services"}"#),
            "Listed.".into(),
            "Listed.".into(),
        ],
    );
    assert_eq!(recoveries(&r.events)[0], "unknown_tool");
    let retry = seen(&r, 1);
    assert!(
        retry.contains("There is no tool `set_version`")
            && retry.contains("The task names `services`, which is in the workspace")
            && retry.contains("{\"name\":\"list_dir\",\"arguments\":{\"path\":\"services\"}}")
            && !retry.contains("answer it directly"),
        "{retry}"
    );
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Required
    );
    assert_eq!(tools_run(&r.events), vec!["list_dir"]);
}

#[test]
fn a_spray_of_other_tools_after_a_call_that_answered_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let spray = [
        read.clone(),
        call("write_file", r#"{"path": "b.txt", "content": "alpha"}"#),
        call("list_dir", r#"{"path": "."}"#),
        call("search", r#"{"pattern": "alpha"}"#),
    ]
    .join("\n");
    let r = run_full(
        dir.path(),
        "What does a.txt say?",
        vec![read.clone(), spray, "a.txt says alpha.".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt says alpha."));
    assert_eq!(tools_run(&r.events), vec!["read_file", "read_file"]);
    assert!(!dir.path().join("b.txt").exists());
    // Not planned: no hold asks for them afterwards.
    assert_eq!(recoveries(&r.events), vec!["repetition"]);
    let outputs = tool_outputs(&r.events);
    assert!(outputs[1].starts_with("You already made exactly this call"));
    let seen_result = seen(&r, 2);
    assert!(
        seen_result.contains("Your reply also called `write_file`, `list_dir`, `search` at once"),
        "{seen_result}"
    );
    // Two other tools after a repeat are a plan, as before: the new call leads.
    let plan = [read.clone(), call("list_dir", r#"{"path": "."}"#)].join("\n");
    let r = run_full(
        dir.path(),
        "What does a.txt say?",
        vec![read, plan, "a.txt says alpha.".into()],
    );
    assert_eq!(tools_run(&r.events), vec!["read_file", "list_dir"]);
}

#[test]
fn a_plan_to_read_an_unread_file_after_another_read_gets_that_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("conf/prod")).unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        "{\"limits\": \"conf/prod/limits.toml\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("conf/prod/limits.toml"),
        "max_connections = 480\n",
    )
    .unwrap();
    let r = run_task(
        dir.path(),
        "Read config.json, then the limits file it names, and tell me max_connections.",
        vec![
            call("read_file", r#"{"path": "config.json"}"#),
            "To read the `conf/prod/limits.toml` file, I will use the `read_file` function.".into(),
            call("read_file", r#"{"path": "conf/prod/limits.toml"}"#),
            "max_connections is 480.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("max_connections is 480."));
    let note = seen(&r, 2);
    assert!(
        note.contains("The file you mean is most likely `conf/prod/limits.toml`")
            && !note.contains("already ran"),
        "{note}"
    );
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
}

#[test]
fn a_read_of_a_long_file_shows_the_lines_of_a_value_the_task_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = String::new();
    for n in 1..=3000 {
        log.push_str(&format!("id=EVT-{n} status=DELIVERED\n"));
    }
    log.push_str("id=EVT-77812 status=REFUNDED\n");
    std::fs::write(dir.path().join("events.log"), log).unwrap();
    let r = run_full(
        dir.path(),
        "events.log is very large. Find the event with id EVT-77812 and answer with its status.",
        vec![
            call("read_file", r#"{"path": "events.log"}"#),
            "REFUNDED".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("REFUNDED"));
    assert!(
        seen(&r, 1).contains("`EVT-77812`, which the task names, is on line 3001 of `events.log`, not in the part this read shows:\n3001| id=EVT-77812 status=REFUNDED\nThe part read:\n   1| id=EVT-1 status=DELIVERED"),
        "{}",
        seen(&r, 1)
    );
}

#[test]
fn a_failed_call_shows_the_command_the_task_says_to_run_until_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run_tests.sh"),
        "echo 'test_x ... FAILED'\n",
    )
    .unwrap();
    let r = run_full(
        dir.path(),
        "Run `sh run_tests.sh` and tell me the name of the test that failed.",
        vec![
            call("list_dir", r#"{"path": "tests"}"#),
            call("shell", r#"{"command": "sh run_tests.sh"}"#),
            call("list_dir", r#"{"path": "tests"}"#),
            "test_x".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("test_x"));
    let shown = "The task says to run `sh run_tests.sh`, and no call has run it yet. That call is:\n<tool_call>\n{\"name\":\"shell\",\"arguments\":{\"command\":\"sh run_tests.sh\"}}\n</tool_call>";
    assert!(seen(&r, 1).contains(shown), "{}", seen(&r, 1));
    // Once it ran, a failed call no longer shows it.
    assert!(!seen(&r, 3).ends_with(shown), "{}", seen(&r, 3));
    assert_eq!(seen(&r, 3).matches("no call has run it yet").count(), 1);
}
