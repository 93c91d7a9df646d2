//! Answers of the `full` profile held once with a note: before a look at a path the
//! task names, with a value or path no result shows, while a planned call waits, or
//! copying a note of the harness.

use super::*;

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
