//! A plan of another step while the task's output file is missing: the retry takes
//! that step instead of a forced write, and the one hold of a claim to be done stays.

use super::*;

#[test]
fn a_reply_that_plans_another_look_is_let_take_it_instead_of_a_forced_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.py"), "# TODO: one\n").unwrap();
    let task = "Find every TODO comment and write them into a new file TODO.md.";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("list_dir", r#"{"path": "."}"#),
            "To do this, follow these steps:\n\n1. **Search the files for TODO**:\n".into(),
            call("search", r#"{"pattern": "TODO"}"#),
            "TODO.md lists them:\nsrc/a.py:1: # TODO: one".into(),
            call(
                "write_file",
                r#"{"path": "TODO.md", "content": "src/a.py:1: # TODO: one\n"}"#,
            ),
            "TODO.md lists the TODO.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("TODO.md lists the TODO."));
    assert_eq!(
        recoveries(&r.events),
        vec!["missing_output", "missing_output"]
    );
    // The listing is a result in hand, but the reply planned a search: the retry is
    // any call, with the note to find the content first, not a forced write.
    let retry = &r.agent.backend().requests[2].request;
    assert_eq!(retry.choice, rein_protocol::ToolChoice::Required);
    assert!(seen(&r, 2).contains("find it first"), "{}", seen(&r, 2));
    // That hold did not spend the one for a claim to be done: the answer that says
    // the file lists them while it is missing is held, and the retry is the write.
    let write = &r.agent.backend().requests[4].request;
    assert_eq!(
        write.choice,
        rein_protocol::ToolChoice::Named("write_file".into())
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("TODO.md")).unwrap(),
        "src/a.py:1: # TODO: one\n"
    );
}

#[test]
fn a_plan_whose_last_step_is_the_write_still_takes_its_first_step() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "# TODO: one\n").unwrap();
    let task = "Find every TODO comment and write them into a new file TODO.md.";
    let plan = "You can use the following steps:\n\n1. **List all files**: Use the `list_dir` function.\n2. **Search for TODO comments**: Use the `search` function.\n3. **Write the results to TODO.md**: Use the `write_file` function.\n";
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("list_dir", r#"{"path": "."}"#),
            plan.into(),
            call("search", r#"{"pattern": "TODO"}"#),
            call(
                "write_file",
                r#"{"path": "TODO.md", "content": "a.py:1: # TODO: one\n"}"#,
            ),
            "Done: TODO.md lists it.".into(),
        ],
    );
    assert_eq!(r.result.answer.as_deref(), Some("Done: TODO.md lists it."));
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Required
    );
    // A narration of the write alone, with a result in hand, is asked as the write.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "# TODO: one\n").unwrap();
    let r = run_full(
        dir.path(),
        task,
        vec![
            call("search", r#"{"pattern": "TODO"}"#),
            "Now I will use the `write_file` function to write TODO.md.".into(),
            call(
                "write_file",
                r#"{"path": "TODO.md", "content": "a.py:1: # TODO: one\n"}"#,
            ),
            "Done: TODO.md lists it.".into(),
        ],
    );
    assert_eq!(
        r.agent.backend().requests[2].request.choice,
        rein_protocol::ToolChoice::Named("write_file".into())
    );
}
