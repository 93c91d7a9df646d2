//! The `full` profile's guards: answers that are not answers, a missing output file,
//! and calls repeated while nothing changed.

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
fn a_result_written_after_a_plan_is_retried_as_the_call_with_the_plan_quoted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flights.txt"), "UA-1187 289\nWN-2240 214\n").unwrap();
    let task = "Read flights.txt, then write the id of the cheapest flight into pick.txt.";
    let plan = "The cheapest flight is WN-2240 at 214.\n\nNow, I will write it into pick.txt.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "flights.txt"}"#),
            format!("{plan}\n\n<tool_response>\nwrote pick.txt\n</tool_response>"),
            call(
                "write_file",
                r#"{"path": "pick.txt", "content": "WN-2240"}"#,
            ),
            "pick.txt holds WN-2240.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("pick.txt holds WN-2240."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    // The retry is a call, and its note carries the pick the dropped reply made.
    let retry = &r.agent.backend().requests[2];
    assert_eq!(retry.request.choice, rein_protocol::ToolChoice::Required);
    let note = seen(&r, 2);
    assert!(
        note.contains("Your reply said: \"The cheapest flight is WN-2240 at 214. Now, I will write it into pick.txt.\""),
        "{note}"
    );
    assert!(!note.contains("wrote pick.txt"), "{note}");
    // A real result quoted in result tags after a few words is an answer.
    let r = run_full(
        dir.path(),
        "Read flights.txt and tell me its second line.",
        vec![
            call("read_file", r#"{"path": "flights.txt"}"#),
            "The second line is:\n<tool_response>\nWN-2240 214\n</tool_response>".into(),
        ],
    );
    assert!(
        recoveries(&r.events).is_empty(),
        "{:?}",
        recoveries(&r.events)
    );
    assert_eq!(r.result.stop_reason, StopReason::Answered);
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
fn a_call_echoed_in_result_tags_is_a_repeat_not_a_format_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run(
        dir.path(),
        vec![
            call("read_file", r#"{"path": "a.txt"}"#),
            "<tool_response>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_response>".into(),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["repetition"]);
}

#[test]
fn a_result_the_model_wrote_itself_is_held_before_the_missing_output_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "## 0.4.2\n").unwrap();
    let task = "Read notes.md and write just its version number into a new file VERSION.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            "<tool_response>\nversion 1.2.3\n</tool_response>".into(),
            call("read_file", r#"{"path": "notes.md"}"#),
            call("write_file", r#"{"path": "VERSION", "content": "0.4.2"}"#),
            "VERSION holds 0.4.2.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("VERSION holds 0.4.2."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(
        seen(&r, 1).contains("it is written as a tool result"),
        "{}",
        seen(&r, 1)
    );
    assert!(!seen(&r, 1).contains("Write it now with write_file"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("VERSION")).unwrap(),
        "0.4.2"
    );
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
fn a_missing_output_file_is_not_asked_for_as_a_write_when_no_result_holds_content() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "## 0.4.2\n").unwrap();
    let task = "Find the version the release notes announce and write it into a new file VERSION.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            // Exits 0, and holds only the error of the command before the pipe.
            call(
                "shell",
                r#"{"command": "cat release-notes.md | head -n 1"}"#,
            ),
            "I could not read the notes.".into(),
            call("read_file", r#"{"path": "notes.md"}"#),
            call("write_file", r#"{"path": "VERSION", "content": "0.4.2"}"#),
            "VERSION holds 0.4.2.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("VERSION holds 0.4.2."));
    assert_eq!(recoveries(&r.events), vec!["missing_output"]);
    // The retry is a call, not a write forced before anything was read.
    let retry = &r.agent.backend().requests[2].request;
    assert_eq!(retry.choice, rein_protocol::ToolChoice::Required);
    assert!(seen(&r, 2).contains("find it first"), "{}", seen(&r, 2));
}

#[test]
fn an_answer_without_the_tasks_output_file_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let task = "List the files and write them into a new file FILES.md, one per line.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            "I wrote them all into FILES.md.".into(),
            call(
                "write_file",
                r#"{"path": "FILES.md", "content": "a.txt\n"}"#,
            ),
            "FILES.md lists the files.".into(),
        ],
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("FILES.md lists the files.")
    );
    assert_eq!(recoveries(&r.events), vec!["missing_output"]);
    assert!(seen(&r, 1).contains("The task asks for `FILES.md`, and it does not exist yet"));
    assert!(dir.path().join("FILES.md").exists());
    // Held once only.
    let other = tempfile::tempdir().unwrap();
    let r = run_full(other.path(), task, vec!["Done.".into(), "Done.".into()]);
    assert_eq!(r.result.answer.as_deref(), Some("Done."));
    assert_eq!(recoveries(&r.events), vec!["missing_output"]);
}

#[test]
fn an_answer_while_the_file_to_change_is_unchanged_is_held_once() {
    let task = "Change the version in deps.json to 2.0.";
    let setup = || {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("deps.json"), "{\"version\": \"1.0\"}\n").unwrap();
        dir
    };
    let dir = setup();
    let r = run_full(
        dir.path(),
        task,
        vec![
            "The version is now 2.0.".into(),
            call(
                "edit_file",
                r#"{"path": "deps.json", "old_string": "1.0", "new_string": "2.0"}"#,
            ),
            "Set the version to 2.0.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("Set the version to 2.0."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(
        seen(&r, 1).contains("The task asks you to change `deps.json`, and it is still unchanged.")
    );
    let changed = std::fs::read_to_string(dir.path().join("deps.json")).unwrap();
    assert!(changed.contains("2.0"), "{changed}");
    // Held once only.
    let dir = setup();
    let r = run_full(
        dir.path(),
        task,
        vec!["Done.".into(), "Done.".into(), "Done.".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("Done."));
    // The second hold is the one for an answer before any look at the file.
    assert_eq!(
        recoveries(&r.events),
        vec!["not_an_answer", "not_an_answer"]
    );
    assert!(seen(&r, 2).contains("no call has looked at the workspace"));
}

#[test]
fn an_answer_before_a_planned_call_ran_is_held_once() {
    let setup = || {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.txt"), "see notes\n").unwrap();
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        dir
    };
    let first = [
        call("read_file", r#"{"path": "index.txt"}"#),
        call("list_dir", r#"{"path": "notes"}"#),
    ]
    .join("\n");
    let task = "Read index.txt, then list the folder it names.";
    let dir = setup();
    let r = run_full(
        dir.path(),
        task,
        vec![
            first.clone(),
            "The index names notes.".into(),
            call("list_dir", r#"{"path": "notes"}"#),
            "notes is empty.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("notes is empty."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(
        seen(&r, 2).contains("Not done yet: your earlier reply also called `list_dir`"),
        "{}",
        seen(&r, 2)
    );
    // Once the planned tool ran, an answer is an answer.
    let dir = setup();
    let r = run_full(
        dir.path(),
        task,
        vec![
            first,
            call("list_dir", r#"{"path": "notes"}"#),
            "notes is empty.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("notes is empty."));
    assert!(
        recoveries(&r.events).is_empty(),
        "{:?}",
        recoveries(&r.events)
    );
}

#[test]
fn an_answer_with_a_value_no_result_shows_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("limits.toml"), "max_connections = 480\n").unwrap();
    let task = "Read limits.toml and tell me max_connections.";
    let read = call("read_file", r#"{"path": "limits.toml"}"#);
    let r = run_full(
        dir.path(),
        task,
        vec![
            read.clone(),
            "max_connections is `100`.".into(),
            "max_connections is 480.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("max_connections is 480."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(
        seen(&r, 2).contains("`100` appears in no tool result and not in the request"),
        "{}",
        seen(&r, 2)
    );
    // Held once; and a value the result shows is an answer at once.
    for (answer, holds) in [("It is `100`.", 1), ("It is `480`.", 0)] {
        let r = run_full(
            dir.path(),
            task,
            vec![read.clone(), answer.into(), answer.into()],
        );
        assert_eq!(r.result.answer.as_deref(), Some(answer));
        assert_eq!(recoveries(&r.events).len(), holds, "{answer}");
    }
}

#[test]
fn an_answer_naming_a_path_without_its_leading_dot_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".config")).unwrap();
    std::fs::write(
        dir.path().join(".config/service.env"),
        "API_TOKEN_TTL=5400\n",
    )
    .unwrap();
    let r = run_full(
        dir.path(), // Not a which-file question (those get the file's path: see `focused`).
        "Where is API_TOKEN_TTL set?",
        vec![
            call("search", r#"{"pattern": "API_TOKEN_TTL"}"#),
            "The file `config/service.env` sets it.".into(),
            "The file `.config/service.env` sets it.".into(),
        ],
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The file `.config/service.env` sets it.")
    );
    assert!(
        seen(&r, 2).contains("`config/service.env` is not a file in the workspace"),
        "{}",
        seen(&r, 2)
    );
    // The search's result writes the path the answer meant: the note names it.
    assert!(
        seen(&r, 2).contains("a result names `.config/service.env`"),
        "{}",
        seen(&r, 2)
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
fn a_repeated_read_names_the_files_its_result_points_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("conf/prod")).unwrap();
    std::fs::write(dir.path().join("conf/prod/limits.toml"), "max = 480\n").unwrap();
    std::fs::write(dir.path().join("conf/shared.toml"), "x = 1\n").unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        "{\"limits\": \"conf/prod/limits.toml\", \"shared\": \"conf/shared.toml\", \"gone\": \"conf/none.toml\"}\n",
    )
    .unwrap();
    let read = call("read_file", r#"{"path": "config.json"}"#);
    let r = run(
        dir.path(),
        vec![
            read.clone(),
            call("read_file", r#"{"path": "conf/shared.toml"}"#),
            read,
            "done".into(),
        ],
    );
    let results = tool_outputs(&r.events);
    assert!(
        results[2].ends_with("Files this result names that you have not read: `conf/prod/limits.toml`. If the task needs one of them, read it next."),
        "{}",
        results[2]
    );
}

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
fn a_successful_call_is_not_run_again_while_nothing_changed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let r = run(
        dir.path(),
        vec![
            read.clone(),
            read.clone(),
            read.clone(),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["repetition", "repetition"]);
    let results = tool_outputs(&r.events);
    assert_eq!(results.len(), 3);
    assert!(results[0].contains("alpha"));
    assert!(
        results[1].starts_with("You already made exactly this call"),
        "{}",
        results[1]
    );
    assert!(
        results[1].contains("alpha"),
        "the earlier result comes back"
    );
    // After the second repeat the reply is decoded as an answer: no call grammar, and
    // a call is cut at its opening.
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
    // A change in between (a write) makes the same read worth running again.
    let r = run(
        dir.path(),
        vec![
            read.clone(),
            call("write_file", r#"{"path": "a.txt", "content": "beta\n"}"#),
            read,
            "a.txt holds beta.".into(),
        ],
    );
    assert_eq!(recoveries(&r.events), Vec::<String>::new());
    assert_eq!(r.result.tool_calls, 3);
}

#[test]
fn identical_calls_in_one_reply_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let list = call("list_dir", r#"{"path": "."}"#);
    let r = run(
        dir.path(),
        vec![format!("{list}\n{list}\n{list}"), "Empty.".into()],
    );
    assert_eq!(r.result.tool_calls, 1);
    assert_eq!(r.result.answer.as_deref(), Some("Empty."));
}

#[test]
fn a_conversation_marker_as_an_argument_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_ungrounded(
        dir.path(),
        vec![
            call(
                "write_file",
                r#"{"path": "out.md", "content": "<tool_response>"}"#,
            ),
            call(
                "write_file",
                r#"{"path": "out.md", "content": "the lines\n"}"#,
            ),
            "Wrote out.md.".into(),
        ],
    );
    assert_eq!(recoveries(&r.events), vec!["schema"]);
    assert!(
        seen(&r, 1).contains("`content` holds `<tool_response>`"),
        "{}",
        seen(&r, 1)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.md")).unwrap(),
        "the lines\n"
    );
}

#[test]
fn a_note_of_the_harness_copied_as_content_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let r = run(
        dir.path(),
        vec![
            read.clone(),
            read,
            call(
                "write_file",
                r#"{"path": "out.md", "content": "You already made exactly this call, and nothing has changed since. Its result was:\n1| alpha\n"}"#,
            ),
            call("write_file", r#"{"path": "out.md", "content": "alpha\n"}"#),
            "Wrote out.md.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("Wrote out.md."));
    let outputs = tool_outputs(&r.events);
    assert!(
        outputs[2].starts_with("Not run: `content` holds a note of the harness (\"You already made exactly this call…\")"),
        "{}",
        outputs[2]
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.md")).unwrap(),
        "alpha\n"
    );
}

#[test]
fn an_earlier_result_copied_as_content_does_not_overwrite_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_ungrounded(
        dir.path(),
        vec![
            call(
                "write_file",
                r#"{"path": "out.md", "content": "the lines\n"}"#,
            ),
            call(
                "write_file",
                r#"{"path": "out.md", "content": "Created `out.md` (10 bytes, 1 line)."}"#,
            ),
            "Wrote out.md.".into(),
        ],
    );
    assert_eq!(recoveries(&r.events), vec!["schema"]);
    assert!(
        seen(&r, 2).contains("the result of an earlier call"),
        "{}",
        seen(&r, 2)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.md")).unwrap(),
        "the lines\n"
    );
    // A result copied with its marker is not written either.
    let r = run_ungrounded(
        dir.path(),
        vec![
            call(
                "write_file",
                r#"{"path": "c.md", "content": "<tool_response>4 matching lines in 3 files:\nsrc/a.py:1: # TODO: x\n"}"#,
            ),
            call(
                "write_file",
                r#"{"path": "c.md", "content": "src/a.py:1: # TODO: x\n"}"#,
            ),
            "Wrote c.md.".into(),
        ],
    );
    assert_eq!(recoveries(&r.events), vec!["schema"]);
    assert!(
        seen(&r, 1).contains("opens with `<tool_response>`"),
        "{}",
        seen(&r, 1)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.md")).unwrap(),
        "src/a.py:1: # TODO: x\n"
    );
    // A template variable is a placeholder too.
    let r = run(
        dir.path(),
        vec![
            call(
                "write_file",
                r#"{"path": "b.md", "content": "{{search_result}}"}"#,
            ),
            "Stopped.".into(),
        ],
    );
    assert_eq!(recoveries(&r.events), vec!["schema"]);
    assert!(!dir.path().join("b.md").exists());
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
fn a_reply_cut_for_looping_is_retried_hotter_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut backend = ScriptedBackend::new(Vec::<String>::new(), true);
    backend.push_looped("The files are: a a a a a a a a a a a a a a a a a a a a");
    backend.push("The workspace is empty.");
    let r = run_backend(dir.path(), backend, RunConfig::new(Profile::Full));
    assert_eq!(r.result.answer.as_deref(), Some("The workspace is empty."));
    assert_eq!(recoveries(&r.events), vec!["repetition"]);
    assert!(seen(&r, 1).contains("kept repeating the same text"));
    let requests = &r.agent.backend().requests;
    // Not a larger allowance: the same one, sampled hotter.
    assert_eq!(requests[1].max_tokens, requests[0].max_tokens);
    assert!(requests[1].request.sampling.temperature > requests[0].request.sampling.temperature);
}

#[test]
fn an_answer_in_result_tags_is_a_result_it_repeats_or_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("id.txt"), "DRF-204\n").unwrap();
    // A question: the file's text recited is its answer (a task that asks for an
    // action gets a note instead, picks.rs).
    let r = run_full(
        dir.path(),
        "What id does id.txt hold?",
        vec![
            call("read_file", r#"{"path": "id.txt"}"#),
            "<tool_response>\nDRF-204\n</tool_response>".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("DRF-204"));
    // A result no tool gave is made up: held, with a note.
    let r = run(
        dir.path(),
        vec![
            "<tool_response>\nMSFT: 237.99 USD\n</tool_response>".into(),
            call("read_file", r#"{"path": "id.txt"}"#),
            "The id is DRF-204.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("The id is DRF-204."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(seen(&r, 1).contains("results come only from the tools you call"));
}

#[test]
fn with_results_in_hand_a_missing_output_file_is_asked_for_as_a_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let task = "Read a.txt and write its words into a new file WORDS.md.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "a.txt"}"#),
            "The words are: alpha.".into(),
            call(
                "write_file",
                r#"{"path": "WORDS.md", "content": "alpha\n"}"#,
            ),
            "WORDS.md holds alpha.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("WORDS.md holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["missing_output"]);
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Named("write_file".into())
    );
    assert!(seen(&r, 2).contains("Write it now with write_file: path `WORDS.md`"));
    assert!(dir.path().join("WORDS.md").exists());
}

#[test]
fn an_answer_before_the_file_the_task_asks_for_is_written_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("migrations")).unwrap();
    std::fs::write(dir.path().join("migrations/0001_init.sql"), "SELECT 1;\n").unwrap();
    let task = "List migrations/ to find the highest number in use. Then create the next migration: its number is one higher, and its file name is <number>_note.sql inside migrations/.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("list_dir", r#"{"path": "migrations"}"#),
            "The highest number in use is 0001.".into(),
            call(
                "write_file",
                r#"{"path": "migrations/0002_note.sql", "content": "SELECT 2;\n"}"#,
            ),
            "Created migrations/0002_note.sql.".into(),
        ],
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Created migrations/0002_note.sql.")
    );
    assert!(
        seen(&r, 2)
            .contains("the task asks for a file to be written, and no call has written anything"),
        "{}",
        seen(&r, 2)
    );
    assert!(dir.path().join("migrations/0002_note.sql").exists());

    // Once: a second answer without a write ends the run.
    let dir = tempfile::tempdir().unwrap();
    let r = run_full(
        dir.path(),
        "Create a file with the license text.",
        vec!["Done.".into(), "Done.".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("Done."));
    assert_eq!(recoveries(&r.events), vec!["missing_output"]);
}

#[test]
fn a_look_at_the_missing_output_file_says_it_is_to_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let task = "Find the words and write them into a new file OUT.md.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "OUT.md"}"#),
            call("write_file", r#"{"path": "OUT.md", "content": "alpha\n"}"#),
            call("list_dir", r#"{"path": "OUT.md"}"#),
            "OUT.md is written.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("OUT.md is written."));
    let outputs = tool_outputs(&r.events);
    assert!(
        outputs[0].starts_with(
            "`OUT.md` does not exist yet: it is the file this task asks you to write."
        ),
        "{}",
        outputs[0]
    );
    // Once written, a failed look at it gets the tool's own message.
    assert!(!outputs[2].contains("does not exist yet"), "{}", outputs[2]);
}

#[test]
fn a_look_at_the_missing_output_file_shows_the_lines_with_the_tasks_word() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/a.py"),
        "x = 1\n# FIXME: merge inputs\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.py"),
        "# FIXME: threshold\nfixme_count = 0\n",
    )
    .unwrap();
    let task = "Find every FIXME comment and write them all into a new file FIXES.md.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("list_dir", r#"{"path": "FIXES.md"}"#),
            "FIXES.md is written.".into(),
            "FIXES.md is written.".into(),
        ],
    );
    let outputs = tool_outputs(&r.events);
    let note = &outputs[0];
    assert!(
        note.contains("The task's word `FIXME` is on these 2 lines:\n```\nb.py:1:"),
        "{note}"
    );
    assert!(note.contains("b.py:1: # FIXME: threshold"), "{note}");
    assert!(note.contains("src/a.py:2: # FIXME: merge inputs"), "{note}");
    assert!(!note.contains("fixme_count"), "{note}");
    assert!(
        note.contains("write `FIXES.md` now with write_file"),
        "{note}"
    );

    // A write of the file that keeps `path:line:` for some shown lines and not for
    // others says which it left out.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "# FIXME: one\n# FIXME: two\n").unwrap();
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "FIXES.md"}"#),
            call(
                "write_file",
                r##"{"path": "FIXES.md", "content": "# FIXME: one\na.py:2: # FIXME: two\n"}"##,
            ),
            "done".into(),
            "done".into(),
        ],
    );
    let outputs = tool_outputs(&r.events);
    assert!(
        outputs[1].ends_with("`FIXES.md` has 1 of the 2 lines shown for the task's word with their `path:line:`; it lacks:\na.py:1: # FIXME: one\nIf the task asks for all of them, write `FIXES.md` again with every line, as shown:\n```\na.py:1: # FIXME: one\na.py:2: # FIXME: two\n```"),
        "{}",
        outputs[1]
    );

    // A write to the same name in other letters says which file the task asks for.
    let dir = tempfile::tempdir().unwrap();
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("write_file", r#"{"path": "fixes.md", "content": "x\n"}"#),
            "done".into(),
            "done".into(),
        ],
    );
    let outputs = tool_outputs(&r.events);
    assert!(
        outputs[0].ends_with("that file does not exist yet: write the content to `FIXES.md`."),
        "{}",
        outputs[0]
    );

    // A word no line holds leaves the plain note.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_full(
        dir.path(),
        "Put every FIXME note into a new file FIXES.md.",
        vec![
            call("read_file", r#"{"path": "FIXES.md"}"#),
            "done".into(),
            "done".into(),
        ],
    );
    let outputs = tool_outputs(&r.events);
    assert!(
        outputs[0].ends_with("Find what goes in it first (search or read the files that hold it), then write it with write_file."),
        "{}",
        outputs[0]
    );
}

#[test]
fn a_reply_that_opens_with_a_failed_call_again_leads_with_its_new_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let missing = call("read_file", r#"{"path": "nowhere.txt"}"#);
    let r = run_task(
        dir.path(),
        "Read nowhere.txt, or else list the folder.",
        vec![
            missing.clone(),
            [missing, call("list_dir", r#"{"path": "."}"#)].join("\n"),
            "The folder holds a.txt.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(tools_run(&r.events), ["read_file", "list_dir"]);
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::CallsDeferred { .. })));
}

#[test]
fn a_loop_after_a_step_that_worked_is_retried_as_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let mut backend = ScriptedBackend::new(vec![read.clone()], true);
    backend.push_looped(format!("{read}\n{read}\n{read}\n{read}"));
    backend.push("a.txt holds alpha.");
    let r = run_backend(dir.path(), backend, RunConfig::new(Profile::Full));
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["repetition"]);
    let retry = &r.agent.backend().requests[2];
    assert_eq!(
        retry.grammar,
        Some(rein_format::prose_grammar()),
        "decoded as an answer"
    );
    assert!(seen(&r, 2).contains("The latest result was:"));
}

#[test]
fn a_first_reply_that_loops_on_a_new_call_runs_it_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let mut backend = ScriptedBackend::new(Vec::<String>::new(), true);
    backend.push_looped(format!("{read}\n{read}\n{read}\n{read}"));
    backend.push("a.txt holds alpha.");
    let r = run_backend(dir.path(), backend, RunConfig::new(Profile::Full));
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(tools_run(&r.events), ["read_file"]);
    assert!(
        recoveries(&r.events).is_empty(),
        "{:?}",
        recoveries(&r.events)
    );
}

#[test]
fn a_loop_after_a_search_that_found_nothing_asks_for_another_step() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let search = call("search", r#"{"pattern": "zebra"}"#);
    let mut backend = ScriptedBackend::new(vec![search.clone()], true);
    backend.push_looped(format!("{search}\n{search}\n{search}\n{search}"));
    backend.push(call("search", r#"{"pattern": "alpha"}"#));
    backend.push("a.txt holds alpha.");
    let r = run_backend_task(
        dir.path(),
        "Which file mentions zebra or alpha?",
        backend,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    let retry = &r.agent.backend().requests[2];
    assert!(retry.grammar.is_some(), "not decoded as an answer");
    let note = seen(&r, 2);
    assert!(note.contains("The latest result found nothing:"), "{note}");
    assert!(note.contains("Do not repeat that call"), "{note}");
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
fn an_answer_that_copies_the_note_is_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = call("read_file", r#"{"path": "a.txt"}"#);
    let mut backend = ScriptedBackend::new(vec![read.clone()], true);
    backend.push_looped(format!("{read}\n{read}\n{read}\n{read}"));
    backend.push("Reply to the task now with what the results say.");
    backend.push("a.txt holds alpha.");
    let r = run_backend(dir.path(), backend, RunConfig::new(Profile::Full));
    assert_eq!(r.result.answer.as_deref(), Some("a.txt holds alpha."));
    assert_eq!(recoveries(&r.events), vec!["repetition", "not_an_answer"]);
    let retry = seen(&r, 3);
    assert!(
        retry.contains("it repeats the instruction instead of answering"),
        "{retry}"
    );
    assert!(
        retry.contains("alpha"),
        "the result is shown again: {retry}"
    );
    assert_eq!(
        r.agent.backend().requests[3].grammar,
        Some(rein_format::prose_grammar()),
        "still an answer"
    );
}

#[test]
fn the_request_written_over_a_file_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docs")).unwrap();
    let original = "# Guide\n\nTo recieve updates, subscribe.\n";
    std::fs::write(dir.path().join("docs/guide.md"), original).unwrap();
    let task = "Fix the spelling mistake 'recieve' in docs/guide.md.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call(
                "write_file",
                &serde_json::json!({"path": "docs/guide.md", "content": task}).to_string(),
            ),
            // The failed write asks for the quoted term's line alone (`focused_edit`).
            "To receive updates, subscribe.".into(),
            call(
                "edit_file",
                r#"{"path": "docs/guide.md", "old_string": "recieve", "new_string": "receive"}"#,
            ),
            "Fixed the spelling in docs/guide.md.".into(),
        ],
    );
    let results = tool_results(&r.events);
    assert!(
        results[0]
            .0
            .starts_with("Not run: this content is the request itself")
            && !results[0].1,
        "{results:?}"
    );
    assert!(results[1].1, "the edit ran: {results:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap(),
        "# Guide\n\nTo receive updates, subscribe.\n"
    );
}

#[test]
fn an_answer_before_any_look_at_a_path_the_task_names_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.min.json"), "{\"maxRetries\": 17}").unwrap();
    let task = "config.min.json is minified onto one line. What is the value of maxRetries in it?";
    let r = run_full(
        dir.path(),
        task,
        vec![
            "maxRetries: 1".into(),
            call("read_file", r#"{"path": "config.min.json"}"#),
            "maxRetries is 17.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("maxRetries is 17."));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let retry = seen(&r, 1);
    assert!(
        retry.contains("no call has looked at the workspace")
            && retry.contains("The task names `config.min.json`")
            && retry
                .contains("{\"name\":\"read_file\",\"arguments\":{\"path\":\"config.min.json\"}}"),
        "{retry}"
    );
    let requests = &r.agent.backend().requests;
    assert_eq!(
        requests[1].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // Held once: a second answer before any look is the answer.
    let r = run_full(
        dir.path(),
        task,
        vec!["maxRetries: 1".into(), "It is 1.".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("It is 1."));
    // A request that names nothing in the workspace is answered at once.
    let r = run_full(dir.path(), "What is 12 times 12?", vec!["144".into()]);
    assert_eq!(r.result.answer.as_deref(), Some("144"));
    assert_eq!(recoveries(&r.events), Vec::<String>::new());
}

#[test]
fn an_answer_naming_a_file_the_workspace_lacks_before_any_look_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let task = which_file_defines(dir.path());
    let r = run_full(
        dir.path(),
        task,
        vec![
            "file:///home/username/Documents/userrepository.py".into(),
            call("search", r#"{"pattern": "(?i)class userrepository"}"#),
            "store/accounts.py".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("store/accounts.py"));
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(seen(&r, 1).contains("the file your answer names is not in it"));
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // The file it names is there: an answer.
    let r = run_full(dir.path(), task, vec!["store/accounts.py".into()]);
    assert_eq!(recoveries(&r.events), Vec::<String>::new());
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
fn a_listing_listed_again_names_the_files_in_it_not_read_yet() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::write(dir.path().join("logs/deploy.log"), "deployed 2.7.1\n").unwrap();
    let list = call("list_dir", r#"{"path": "logs/"}"#);
    let r = run_full(
        dir.path(),
        "The logs/ directory holds the deploy log. Find the version that was deployed.",
        vec![list.clone(), list, "2.7.1".into()],
    );
    let outputs = tool_outputs(&r.events);
    assert!(
        outputs[1].starts_with("You already made exactly this call")
            && outputs[1].ends_with("Files this result names that you have not read: `logs/deploy.log`. If the task needs one of them, read it next."),
        "{outputs:?}"
    );
}

#[test]
fn a_described_edit_of_the_unchanged_file_gets_the_call_that_makes_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pricing.py"),
        "BULK_THRESHOLD = 20\nBULK_DISCOUNT_RATE = 0.10\nTAX_RATE = 0.21\n",
    )
    .unwrap();
    let read = call("read_file", r#"{"path": "pricing.py"}"#);
    let described = "To fix the failing test, change the constant `BULK_DISCOUNT_RATE` in `pricing.py` from `0.10` to `0.15`.";
    let r = run_task(
        dir.path(),
        "The fix is to change one constant in pricing.py to the value the test expects.",
        vec![
            read,
            "The test expects 0.15.".into(),
            described.into(),
            call(
                "edit_file",
                r#"{"path": "pricing.py", "old_string": "BULK_DISCOUNT_RATE = 0.10", "new_string": "BULK_DISCOUNT_RATE = 0.15"}"#,
            ),
            "Changed BULK_DISCOUNT_RATE to 0.15.".into(),
        ],
        true,
        // The verification guard (its own tests) would ask for a check of the edit.
        RunConfig {
            verification_guard: false,
            ..RunConfig::new(Profile::Full)
        },
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Changed BULK_DISCOUNT_RATE to 0.15.")
    );
    // The first hold says the file is unchanged; the second, after the described
    // change, shows the call that makes it.
    assert_eq!(
        recoveries(&r.events),
        vec!["not_an_answer", "not_an_answer"]
    );
    let retry = seen(&r, 3);
    assert!(
        retry.contains("your answer describes the change. Make it now:")
            && retry.contains(r#""old_string":"BULK_DISCOUNT_RATE = 0.10""#)
            && retry.contains(r#""new_string":"BULK_DISCOUNT_RATE = 0.15""#),
        "{retry}"
    );
    let changed = std::fs::read_to_string(dir.path().join("pricing.py")).unwrap();
    assert!(changed.contains("BULK_DISCOUNT_RATE = 0.15"), "{changed}");
}

#[test]
fn an_edit_narrated_in_a_notation_of_its_own_gets_the_call_that_makes_it() {
    let dir = tempfile::tempdir().unwrap();
    let deps = "{\n  \"web\": {\n    \"chart-lib\": { \"version\": \"3.2.1\" }\n  },\n  \"api\": {\n    \"chart-lib\": { \"version\": \"2.9.0\" }\n  }\n}\n";
    std::fs::write(dir.path().join("deps.json"), deps).unwrap();
    let narrated = "Once you have the `old_string`, you can use the `edit_file` function to replace the line `api:chart-lib:2.9.0` with `api:chart-lib:3.2.1`.";
    let r = run_task(
        dir.path(),
        "Find the chart-lib version web uses, then change the chart-lib version of the api package in deps.json to that same version.",
        vec![
            call("read_file", r#"{"path": "deps.json"}"#),
            narrated.into(),
            call(
                "edit_file",
                r#"{"path": "deps.json", "old_string": "\"chart-lib\": { \"version\": \"2.9.0\" }", "new_string": "\"chart-lib\": { \"version\": \"3.2.1\" }"}"#,
            ),
            "api now uses chart-lib 3.2.1.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("api now uses chart-lib 3.2.1.")
    );
    // The narration is held with the ready call, and the retry is decoded as a call.
    let retry = seen(&r, 2);
    assert!(
        retry.contains("your answer describes the change. Make it now:")
            && retry.contains(r#""old_string":"\"chart-lib\": { \"version\": \"2.9.0\" }""#),
        "{retry}"
    );
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
}

#[test]
fn a_write_over_a_file_the_run_never_read_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let original = "class Http:\n    timeout = 10\n\nclass Database:\n    timeout = 10\n";
    std::fs::write(dir.path().join("settings.py"), original).unwrap();
    let write = call(
        "write_file",
        r#"{"path": "settings.py", "content": "new content"}"#,
    );
    let r = run_task(
        dir.path(),
        "In settings.py, change the Http class's timeout from 10 to 30.",
        vec![
            write.clone(),
            call("read_file", r#"{"path": "settings.py"}"#),
            write,
            "Done.".into(),
            "Done.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    let results = tool_results(&r.events);
    assert!(
        results[0].0.starts_with(
            "Not run: `settings.py` already exists (63 bytes, 5 lines) and you have not read it"
        ) && !results[0].1,
        "{results:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("settings.py")).unwrap(),
        "new content",
        "after the read, the write runs: {results:?}"
    );
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
fn an_answer_taken_from_the_latest_result_is_not_held_for_a_waiting_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("limits.toml"), "max_connections = 480\n").unwrap();
    let first = [
        call("read_file", r#"{"path": "limits.toml"}"#),
        call("search", r#"{"pattern": "max_connections"}"#),
    ]
    .join("\n");
    let task = "Read limits.toml and tell me max_connections.";
    let r = run_full(
        dir.path(),
        task,
        vec![first.clone(), "max_connections is 480.".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("max_connections is 480."));
    assert_eq!(recoveries(&r.events), Vec::<String>::new());
    // An answer that opens like the note ("Not done yet.") copies it.
    let r = run_full(
        dir.path(),
        task,
        vec![
            first,
            "It is set in the file.".into(),
            "Not done yet.".into(),
            "max_connections is 480.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("max_connections is 480."));
    assert_eq!(
        recoveries(&r.events),
        vec!["not_an_answer", "not_an_answer"]
    );
}

#[test]
fn an_answer_before_the_change_the_task_asks_for_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("services/auth")).unwrap();
    std::fs::write(dir.path().join("services/auth/VERSION"), "1.0.0\n").unwrap();
    let task =
        "Every service under services/ has a VERSION file. Set the version of each one to 1.1.0.";
    let list = call("list_dir", r#"{"path": "services"}"#);
    let r = run_full(
        dir.path(),
        task,
        vec![
            list.clone(),
            "The versions are set to 1.1.0.".into(),
            call("read_file", r#"{"path": "services/auth/VERSION"}"#),
            call(
                "write_file",
                r#"{"path": "services/auth/VERSION", "content": "1.1.0\n"}"#,
            ),
            "Set services/auth/VERSION to 1.1.0.".into(),
        ],
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Set services/auth/VERSION to 1.1.0.")
    );
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let note = seen(&r, 2);
    assert!(
        note.contains("no call of this run has changed anything")
            && note.contains("reply that no change was needed"),
        "{note}"
    );
    // The retry may answer: "no change was needed" is an answer.
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Auto
    );
    // Held once.
    let r = run_full(
        dir.path(),
        task,
        vec![list, "Done.".into(), "No change was needed.".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("No change was needed."));
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

#[test]
fn an_answer_that_points_to_a_file_it_wrote_gets_that_content() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.csv"), "C-1,ines@example.com,pro\n").unwrap();
    let r = run_task(
        dir.path(),
        "Find the line of ines@example.com in data.csv and tell me the customer's id and plan.",
        vec![
            call("read_file", r#"{"path": "data.csv"}"#),
            call(
                "write_file",
                r#"{"path": "result.txt", "content": "C-1,pro"}"#,
            ),
            "The customer's id and plan are now stored in \"result.txt\".".into(),
            "The id is C-1 and the plan pro.".into(),
        ],
        true,
        whole_context(),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The id is C-1 and the plan pro.")
    );
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    let note = seen(&r, 3);
    assert!(
        note.contains("You wrote `result.txt` with:\nC-1,pro\nReply with the answer itself"),
        "{note}"
    );
    assert!(r.agent.backend().requests[3].request.prose);
}

#[test]
fn the_write_of_the_missing_output_file_is_asked_in_the_tasks_words() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.log"), "ERROR code PG-4471 here\n").unwrap();
    let task = "Find the ERROR line in server.log and write just its code into a new file named incident.txt. Then tell me the code.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "server.log"}"#),
            "The code is PG-4471.".into(),
            call(
                "write_file",
                r#"{"path": "incident.txt", "content": "PG-4471"}"#,
            ),
            "The code is PG-4471.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("The code is PG-4471."));
    let note = seen(&r, 2);
    assert!(
        note.contains("The task says: \"Find the ERROR line in server.log and write just its code into a new file named incident.txt.\""),
        "{note}"
    );
}

#[test]
fn an_answer_copying_the_repeat_results_instruction_is_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("VERSION"), "2.32.3\n").unwrap();
    let r = run_full(
        dir.path(),
        "Which version does VERSION hold?",
        vec![
            call("read_file", r#"{"path": "VERSION"}"#),
            call("read_file", r#"{"path": "VERSION"}"#),
            "Do not repeat it: use this result to answer the task, or make a different call."
                .into(),
            "VERSION holds 2.32.3.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("VERSION holds 2.32.3."));
    assert_eq!(recoveries(&r.events), vec!["repetition", "not_an_answer"]);
    assert!(
        seen(&r, 3).contains("it repeats the instruction instead of answering"),
        "{}",
        seen(&r, 3)
    );
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
fn a_tool_name_written_as_a_shell_command_gets_the_call_to_make() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "release on Friday\n").unwrap();
    let r = run_task(
        dir.path(),
        "When is the release, according to notes.txt?",
        vec![
            call("shell", r#"{"command": "read_file notes.txt"}"#),
            call("read_file", r#"{"path": "notes.txt"}"#),
            "On Friday.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("On Friday."));
    let results = tool_results(&r.events);
    let (refused, ok) = &results[0];
    assert!(!ok);
    assert!(
        refused.contains("`read_file` is one of your tools"),
        "{refused}"
    );
    assert!(refused.contains(r#""path":"notes.txt""#), "{refused}");
    assert!(!refused.contains("exit code"), "{refused}");
    // A real command runs.
    let r = run_task(
        dir.path(),
        "When is the release, according to notes.txt?",
        vec![
            call("shell", r#"{"command": "cat notes.txt"}"#),
            "On Friday.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    let results = tool_results(&r.events);
    assert!(
        results[0].1 && results[0].0.contains("release on Friday"),
        "{results:?}"
    );
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
fn a_reply_that_finds_something_new_does_not_exhaust_the_repetition_budget() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.txt"), "hello\n").unwrap();
    let missing = |n: u32| call("read_file", &format!(r#"{{"path": "gone{n}.txt"}}"#));
    let first: Vec<String> = (1..=4).map(missing).collect();
    let mut second = first.clone();
    second.push(call("read_file", r#"{"path": "real.txt"}"#));
    let r = run_full(
        dir.path(),
        "What does real.txt say?",
        vec![first.join("\n"), second.join("\n"), "It says hello.".into()],
    );
    // Four repeated failures are over the cap of three, but the same reply read the
    // file: the run goes on to its answer.
    assert_eq!(
        recoveries(&r.events)
            .iter()
            .filter(|c| *c == "repetition")
            .count(),
        4
    );
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(r.result.answer.as_deref(), Some("It says hello."));
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

/// `full` with the answer asked after the whole conversation, for tests that read the
/// notes it carries (`focused` tests the focused turn).
fn whole_context() -> RunConfig {
    let mut config = RunConfig::new(Profile::Full);
    config.focused_answer = false;
    config
}
