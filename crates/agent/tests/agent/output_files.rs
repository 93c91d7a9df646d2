//! The file a task asks for under the `full` profile: an answer while it is missing or
//! unchanged is held once, and a look at it says it is to be written.

use super::*;

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
fn an_answer_with_the_value_a_query_computed_is_not_held_as_no_change() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("data/orders.csv"),
        "id,channel,orders\n1,phone,59\n2,web,80\n3,phone,28\n",
    )
    .unwrap();
    let task = "Add up the `orders` column of data/orders.csv, counting only the rows whose `channel` is `phone`, and tell me the total.";
    let query = call(
        "query_data",
        r#"{"path": "data/orders.csv", "where": ["channel=phone"], "op": "sum", "field": "orders"}"#,
    );
    let r = run_full(dir.path(), task, vec![query, "The total is 87.".into()]);
    assert!(
        tool_outputs(&r.events)[0].contains("Result: 87"),
        "{:?}",
        tool_outputs(&r.events)
    );
    assert_eq!(r.result.answer.as_deref(), Some("The total is 87."));
    assert!(
        recoveries(&r.events).is_empty(),
        "{:?}",
        recoveries(&r.events)
    );
    // Values a read only showed are still held once: the task's words ask for a
    // change, and nothing computed them.
    let read = call("read_file", r#"{"path": "data/orders.csv"}"#);
    let quoted = "The phone rows hold 59 and 28.";
    let r = run_full(dir.path(), task, vec![read, quoted.into(), quoted.into()]);
    assert_eq!(recoveries(&r.events), vec!["not_an_answer"]);
    assert!(seen(&r, 2).contains("no call of this run has changed anything"));
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
