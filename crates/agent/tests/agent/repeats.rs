//! Calls repeated while nothing changed, and replies cut for looping, under the
//! `full` profile.

use super::*;

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
