//! Writes the `full` profile does not run as they came: copies of notes, results or
//! the request as content, a write over a file never read, an edit only described.

use super::*;

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
