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
    let results: Vec<&str> = r
        .events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult { output, .. } => Some(output.as_str()),
            _ => None,
        })
        .collect();
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
