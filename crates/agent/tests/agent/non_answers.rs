//! Replies of the `full` profile that are not answers: narration of tool use, steps
//! explained, a result in the template's tags, the task given back — and a question
//! back to the user, which is one.

use super::*;

#[test]
fn a_reply_that_narrates_a_step_is_not_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        dir.path(),
        vec![
            "To continue, you can use the `list_dir` function with the path \".\".".into(),
            call("list_dir", r#"{"path": "."}"#),
            "The workspace is empty.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("The workspace is empty."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    // The narration is not kept; the retry carries one note.
    let second = seen(&r, 1);
    assert!(!second.contains("you can use the `list_dir`"), "{second}");
    assert!(
        second.contains("describes using `list_dir` instead of calling it"),
        "{second}"
    );
    // At most three times: a fourth narration is taken as it is.
    let r = run(dir.path(), vec!["I will use the search tool.".into(); 4]);
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(
        recoveries(&r.events),
        vec!["not_an_answer", "not_an_answer", "not_an_answer"]
    );
}

#[test]
fn a_question_back_to_the_user_is_their_answer_and_forces_no_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let question = "Let me know which of the two configs you mean: staging or production?";
    let r = run(dir.path(), vec![question.into()]);
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(r.result.answer.as_deref(), Some(question));
    assert!(recoveries(&r.events).is_empty());
    assert_eq!(r.agent.backend().requests.len(), 1);
    // Rule fired counts stay empty: nothing held it.
    assert!(r.result.rules.is_empty(), "{:?}", r.result.rules);
}

#[test]
fn a_command_that_runs_the_tests_the_request_names_is_not_held_as_ungrounded() {
    // "Run the tests" in a Rust project: `cargo test` takes its word from the
    // request and is the command the workspace's manifest implies.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let r = run_full(
        dir.path(),
        "Run the tests and tell me whether they pass.",
        vec![
            call("shell", r#"{"command": "cargo test"}"#),
            "The tests could not run.".into(),
        ],
    );
    assert!(
        !recoveries(&r.events).contains(&"ungrounded".to_string()),
        "{:?}",
        recoveries(&r.events)
    );
    assert_eq!(r.result.tool_calls, 1);
    assert!(!r.result.rules.contains_key("ungrounded_first_call"));
}

#[test]
fn steps_explained_after_a_step_that_worked_get_the_latest_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "ticket SUP-7\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            call("read_file", r#"{"path": "a.txt"}"#),
            "To tell you the ticket id, here is the step-by-step process:\n\n1. **Search for the ticket**:".into(),
            "The ticket id is SUP-7.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("The ticket id is SUP-7."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let retry = seen(&r, 2);
    assert!(
        retry.contains("The latest result (of `read_file`) was:"),
        "{retry}"
    );
    assert!(retry.contains("SUP-7"), "{retry}");
    assert!(retry.contains("take the first one now"), "{retry}");
    assert_ne!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // Before anything ran, the same reply is retried as a call.
    let r = run(
        dir.path(),
        vec![
            "To read it, you can follow these steps:\n\n1. Open the file.".into(),
            call("read_file", r#"{"path": "a.txt"}"#),
            "SUP-7".into(),
        ],
    );
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Required
    );
}

#[test]
fn narration_about_a_tool_that_already_ran_gets_its_result_and_is_read_as_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let r = run(
        dir.path(),
        vec![
            read.clone(),
            "To read it, you can use the `read_file` function with the path a.txt.".into(),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let retry = seen(&r, 2);
    assert!(
        retry.contains("`read_file` already ran, and its result was:"),
        "{retry}"
    );
    assert!(retry.contains("alpha"), "{retry}");
    // Not forced into a call: the answer is what is wanted.
    assert_ne!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // After a repeated call, the same narration makes the next reply an answer-only
    // decode (no call grammar, the call marker stops it).
    let r = run(
        dir.path(),
        vec![
            read.clone(),
            read,
            "You can use the `read_file` function to read a.txt.".into(),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["repetition", "not_an_answer"]);
    let last = &r.agent.backend().requests[3];
    assert_eq!(
        last.grammar,
        Some(rein_format::prose_grammar()),
        "decoded as prose"
    );
    assert!(
        last.stop.contains(&"<tool_call>".to_string()),
        "{:?}",
        last.stop
    );
}

#[test]
fn narration_that_names_a_tool_not_run_yet_asks_for_that_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_full(
        dir.path(),
        "Read a.txt and copy it into b.txt.",
        vec![
            call("read_file", r#"{"path": "a.txt"}"#),
            "After `read_file`, I will call the `write_file` function with the text.".into(),
            call("write_file", r#"{"path": "b.txt", "content": "alpha\n"}"#),
            "b.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("b.txt holds alpha."));
    let note = seen(&r, 2);
    assert!(note.contains("That was not an answer"), "{note}");
    assert!(!note.contains("already ran"), "{note}");
    assert!(dir.path().join("b.txt").exists());
}

#[test]
fn a_broken_call_does_not_spend_the_missing_output_hold() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "## 0.4.2\n").unwrap();
    let task = "Find the version the release notes announce and write it into a new file VERSION.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            "<tools>\n  <tool name=\"read_file\" arguments={\"path\": \"notes.md\"} />\n</tools>"
                .into(),
            call("read_file", r#"{"path": "notes.md"}"#),
            "The version is 0.4.2.".into(),
            call("write_file", r#"{"path": "VERSION", "content": "0.4.2"}"#),
            "VERSION holds 0.4.2.".into(),
        ],
    );
    // The answer without the file is still held once, after the broken call's hold.
    assert_eq!(
        recoveries(&r.events),
        vec!["not_an_answer", "missing_output"]
    );
    assert_eq!(r.result.answer.as_deref(), Some("VERSION holds 0.4.2."));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("VERSION")).unwrap(),
        "0.4.2"
    );
}

#[test]
fn a_result_that_found_nothing_echoed_in_result_tags_is_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_full(dir.path(), "Is there a zebra in the workspace?", vec![
            call("search", r#"{"pattern": "zebra"}"#),
            "<tool_response>\nNo matches for `zebra` in `.`; nothing else matches either (tried case-insensitive, in hidden and ignored files, as a file name): try a different pattern.\n</tool_response>".into(),
            "There is no zebra in the workspace.".into(),
        ]);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("There is no zebra in the workspace.")
    );
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
}

#[test]
fn a_reply_of_empty_call_tags_is_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("store.py"),
        "class UserRepository:\n    pass\n",
    )
    .unwrap();
    let r = run_full(
        dir.path(),
        "Which file defines the class named userrepository?",
        vec![
            "<tools></tools>".into(),
            call("search", r#"{"pattern": "class UserRepository"}"#),
            "store.py defines it.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("store.py defines it."));
    assert_eq!(recoveries(&r.events), vec!["format"]);
    assert!(
        seen(&r, 1).contains("Your last reply was empty"),
        "{}",
        seen(&r, 1)
    );
    // The retry may not end blank; the turn after it may again.
    let no_blank: Vec<bool> = r
        .agent
        .backend()
        .requests
        .iter()
        .map(|seen| seen.request.no_blank)
        .collect();
    assert_eq!(no_blank, vec![false, true, false]);
    // With `no_blank` on, no reply may.
    let mut config = RunConfig::new(Profile::Full);
    config.set("no_blank", "on").unwrap();
    let r = run_task(
        dir.path(),
        "Which file defines the class named userrepository?",
        vec![
            call("search", r#"{"pattern": "class UserRepository"}"#),
            "store.py defines it.".into(),
        ],
        true,
        config,
    );
    assert!(r
        .agent
        .backend()
        .requests
        .iter()
        .all(|seen| seen.request.no_blank));
}

#[test]
fn a_reply_that_says_it_would_call_the_tool_that_ran_gets_the_result_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("orders.txt"), "ORD-5531 C-1042\n").unwrap();
    let r = run_full(dir.path(), "Which order belongs to customer C-1042? Read orders.txt.", vec![
            call("read_file", r#"{"path": "orders.txt"}"#),
            "To find the order of customer C-1042, I would call the `read_file` function with the path orders.txt.".into(),
            "Order ORD-5531.".into(),
        ]);
    assert_eq!(r.result.answer.as_deref(), Some("Order ORD-5531."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(
        seen(&r, 2).contains("`read_file` already ran"),
        "{}",
        seen(&r, 2)
    );
}

#[test]
fn talk_of_another_tool_around_the_latest_results_value_gets_that_result_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("events.txt"), "EVT-6120 Budget review\n").unwrap();
    let r = run_full(dir.path(), "Find the Budget review event in events.txt and tell me its id.", vec![
            call("read_file", r#"{"path": "events.txt"}"#),
            "To find the event id, you can use the `search` function with the event id \"EVT-6120\".".into(),
            "The id is EVT-6120.".into(),
        ]);
    assert_eq!(r.result.answer.as_deref(), Some("The id is EVT-6120."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    // Not sent off to call `search`: shown the read's result and asked for the answer.
    assert!(
        seen(&r, 2).contains("`read_file` already ran, and its result was"),
        "{}",
        seen(&r, 2)
    );
}

#[test]
fn a_bare_claim_of_completion_to_a_question_gets_the_latest_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("size.txt"), "firmware.bin: 4096 bytes\n").unwrap();
    let task = "How many bytes is firmware.bin? Answer with the number.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "size.txt"}"#),
            "The task is done.".into(),
            "4096".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("4096"));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let retry = seen(&r, 2);
    assert!(retry.contains("says the task is done"), "{retry}");
    assert!(retry.contains("4096 bytes"), "{retry}");
    // A task that asks for a change only may be done.
    let r = run_full(
        dir.path(),
        "Create notes.txt with the word hello in it.",
        vec![
            call(
                "write_file",
                r#"{"path": "notes.txt", "content": "hello\n"}"#,
            ),
            "The task is done.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("The task is done."));
    assert_eq!(recoveries(&r.events), Vec::<String>::new());
}

#[test]
fn the_task_given_back_as_the_answer_is_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::write(
        dir.path().join("logs/deploy.log"),
        "deployed version 2.7.1\n",
    )
    .unwrap();
    let task = "The logs/ directory holds the deploy log. Find the version that was deployed and answer with it.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "logs/deploy.log"}"#),
            task.into(),
            "2.7.1".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("2.7.1"));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let retry = seen(&r, 2);
    assert!(retry.contains("repeats the task"), "{retry}");
    assert!(retry.contains("deployed version 2.7.1"), "{retry}");
}

#[test]
fn a_copy_of_the_harnesss_words_in_a_result_is_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settings.py"), "DEBUG = True\n").unwrap();
    let r = run_task(
        dir.path(),
        "In settings.py, what is DEBUG set to?",
        vec![
            call("read_file", r#"{"path": "settings.py"}"#),
            "This call was made in the same reply as `search`, before its result existed.".into(),
            "DEBUG is True.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("DEBUG is True."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
}

#[test]
fn a_question_of_which_file_answered_without_a_path_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let task = which_file_defines(dir.path());
    let search = call("search", r#"{"pattern": "class UserRepository"}"#);
    let r = run_task(
        dir.path(),
        task,
        vec![
            search.clone(),
            "The file `search` defines the class named `userrepository`.".into(),
            "store/accounts.py:1: class UserRepository:".into(),
        ],
        true,
        whole_context(),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("store/accounts.py:1: class UserRepository:"),
        "{:?}",
        r.events
    );
    assert!(
        seen(&r, 2).contains("the task asks for a file's path, and your reply names no file of the workspace. `search` already ran, and its result was:\n1 matching line in 1 file:\nstore/accounts.py:1: class UserRepository:"),
        "{}",
        seen(&r, 2)
    );
    // Held once: the next answer stands, whatever it says.
    let r = run_task(
        dir.path(),
        task,
        vec![
            search,
            "The file `search` defines it.".into(),
            "It is the search tool.".into(),
        ],
        true,
        whole_context(),
    );
    assert_eq!(r.result.answer.as_deref(), Some("It is the search tool."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer".to_string()]);
}
