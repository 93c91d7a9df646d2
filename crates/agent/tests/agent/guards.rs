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
    // At most twice: a third narration is taken as it is.
    let r = run(dir.path(), vec!["I will use the search tool.".into(); 3]);
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(
        recoveries(&r.events),
        vec!["not_an_answer", "not_an_answer"]
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
    assert!(last.grammar.is_none());
    assert!(
        last.stop.contains(&"<tool_call>".to_string()),
        "{:?}",
        last.stop
    );
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
fn an_answer_without_the_tasks_output_file_is_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let task = "List the files and write them into a new file FILES.md, one per line.";
    let r = run_task(
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
        true,
        RunConfig::new(Profile::Full),
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
    let r = run_task(
        other.path(),
        task,
        vec!["Done.".into(), "Done.".into()],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("Done."));
    assert_eq!(recoveries(&r.events), vec!["missing_output"]);
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
    assert!(last.grammar.is_none());
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
    let r = run(
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
fn an_earlier_result_copied_as_content_does_not_overwrite_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(
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
    // Before anything worked, the retry must be a call.
    let r = run(
        dir.path(),
        vec![
            bare,
            call("read_file", r#"{"path": "a.txt"}"#),
            "a.txt holds alpha.".into(),
        ],
    );
    assert_eq!(
        r.agent.backend().requests[1].request.choice,
        rein_protocol::ToolChoice::Required
    );
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
    let r = run(
        dir.path(),
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
    let r = run_task(
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
        true,
        RunConfig::new(Profile::Full),
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
fn a_look_at_the_missing_output_file_says_it_is_to_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let task = "Find the words and write them into a new file OUT.md.";
    let r = run_task(
        dir.path(),
        task,
        vec![
            call("read_file", r#"{"path": "OUT.md"}"#),
            call("write_file", r#"{"path": "OUT.md", "content": "alpha\n"}"#),
            "OUT.md is written.".into(),
        ],
        true,
        RunConfig::new(Profile::Full),
    );
    assert_eq!(r.result.answer.as_deref(), Some("OUT.md is written."));
    let first = tool_outputs(&r.events);
    assert!(
        first[0].starts_with(
            "`OUT.md` does not exist yet: it is the file this task asks you to write."
        ),
        "{}",
        first[0]
    );
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
    assert!(retry.grammar.is_none(), "decoded as an answer");
    assert!(seen(&r, 2).contains("The latest result was:"));
}
