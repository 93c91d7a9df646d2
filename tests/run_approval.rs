//! Approvals and the agent session, end to end over real HTTP on loopback (a scripted
//! chat server stands in for the model, so the calls are known): `rein run --approve
//! writes` shows a write as a diff and runs it on `y`, leaves the workspace unchanged
//! on `n` (the model is told), runs the user's arguments on `e`; and `rein run -i`
//! works on two tasks in one session, the second with the first's conversation, then
//! `/undo` puts the first task's file back.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::{json, Value};

use crate::support::scripted_server::{calls, says, scripted_server, Received};
use crate::support::{rein_command, stderr, stdout, NO_USER_CONFIG};

/// `rein run` against the server at `url` in `dir`, `--approve writes`, with `args`
/// after the common ones and `answers` on standard input; it must succeed.
fn run(url: &str, dir: &Path, args: &[&str], answers: &str) -> Output {
    let records = dir.join(".records");
    let mut child = rein_command()
        .args([
            "run",
            "--backend",
            "openai",
            "--base-url",
            url,
            "--model",
            "m",
            "--profile",
            "naive",
            "--approve",
            "writes",
            "--workdir",
            dir.join("work").to_str().unwrap(),
            "--trace",
            dir.join("trace.jsonl").to_str().unwrap(),
        ])
        .args(args)
        .env("REIN_CONFIG_DIR", NO_USER_CONFIG)
        .env("REIN_RUNS_DIR", &records)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?}\n{}\n{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    out
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("work")).unwrap();
    std::fs::write(dir.path().join("work/notes.md"), "one\ntwo\n").unwrap();
    dir
}

/// Everything the model was sent in request `index` (tool results come back as tool
/// messages or, with tools taught in the prompt, inside user messages).
fn sent(received: &Received, index: usize) -> String {
    let requests = received.lock().unwrap();
    requests[index]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn write_call() -> Value {
    calls(
        "write_file",
        json!({"path": "notes.md", "content": "one\n2\n"}),
    )
}

#[test]
fn a_refused_write_changes_nothing_and_the_model_is_told() {
    let (url, received) = scripted_server(vec![write_call(), says("I left it.")]);
    let dir = workspace();
    let out = run(&url, dir.path(), &["Change two to 2 in notes.md"], "n\n");
    // The write was shown as a diff before anything ran.
    let shown = stderr(&out);
    assert!(
        shown.contains("--- a/notes.md") && shown.contains("-two\n"),
        "{shown}"
    );
    assert!(shown.contains("+2\n"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("work/notes.md")).unwrap(),
        "one\ntwo\n"
    );
    let sent = sent(&received, 1);
    assert!(sent.contains("the user declined"), "{sent}");
    assert!(stdout(&out).contains("I left it."), "{}", stdout(&out));
    let trace = std::fs::read_to_string(dir.path().join("trace.jsonl")).unwrap();
    assert!(
        trace.contains(r#""event":"approval""#) && trace.contains(r#""decision":"refuse""#),
        "{trace}"
    );
}

#[test]
fn an_approved_write_runs_and_an_edited_one_runs_as_edited() {
    let (url, _) = scripted_server(vec![write_call(), says("Changed.")]);
    let dir = workspace();
    run(&url, dir.path(), &["Change two to 2 in notes.md"], "y\n");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("work/notes.md")).unwrap(),
        "one\n2\n"
    );

    let (url, received) = scripted_server(vec![write_call(), says("Changed.")]);
    let dir = workspace();
    let edited = r#"{"path": "notes.md", "content": "one\nTWO\n"}"#;
    run(
        &url,
        dir.path(),
        &["Change two to 2 in notes.md"],
        &format!("e\n{edited}\n"),
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("work/notes.md")).unwrap(),
        "one\nTWO\n"
    );
    let sent = sent(&received, 1);
    assert!(sent.contains("The user changed this call"), "{sent}");
}

#[test]
fn a_session_works_on_a_follow_up_with_the_conversation_kept_and_undoes_it() {
    let (url, received) = scripted_server(vec![
        calls(
            "write_file",
            json!({"path": "hello.txt", "content": "hi\n"}),
        ),
        says("Wrote hello.txt."),
        says("It says hi."),
    ]);
    let dir = workspace();
    let out = run(
        &url,
        dir.path(),
        &["-i"],
        "Write hi into hello.txt\ny\nWhat does it say?\n/undo\n",
    );
    let printed = stdout(&out);
    assert!(printed.contains("Wrote hello.txt."), "{printed}");
    assert!(printed.contains("It says hi."), "{printed}");
    // The follow-up's request holds the first task, its call, its result and answer.
    let requests = received.lock().unwrap();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let messages = requests[2]["messages"].as_array().unwrap();
    let text: Vec<String> = messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    let at = |needle: &str| text.iter().position(|t| t.contains(needle));
    let first = at("Write hi into hello.txt").expect("the first task");
    let answer = at("Wrote hello.txt.").expect("the first answer");
    let follow = at("What does it say?").expect("the follow-up");
    assert!(first < answer && answer < follow, "{text:?}");
    assert!(text.iter().any(|t| t.contains("hello.txt")), "{text:?}");
    // `/undo` removed the file the first task made.
    assert!(printed.contains("removed  hello.txt"), "{printed}");
    assert!(!dir.path().join("work/hello.txt").exists());
}
