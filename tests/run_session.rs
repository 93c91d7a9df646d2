//! `rein run -i` in a real terminal (tmux): two tasks with the tiny model, the second
//! reusing the first's tokens; and an approval prompt answered `n`, which leaves the
//! workspace as it was (the calls come from a scripted server on loopback, so a write
//! is certain to be asked about).

use std::path::Path;

use serde_json::json;

use crate::chat_session::Tmux;
use crate::support::scripted_server::{calls, says, scripted_server};
use crate::support::{tiny_model, NO_USER_CONFIG};

/// The session's task prompts on `screen`.
fn task_prompts(screen: &str) -> usize {
    screen.lines().filter(|l| l.starts_with("task>")).count()
}

/// The (prompt, reused) token counts of the result lines on `screen`, in order.
fn costs(screen: &str) -> Vec<(usize, usize)> {
    screen
        .lines()
        .filter_map(|line| {
            let rest = line.split("; prompt ").nth(1)?;
            let mut words = rest.split_whitespace();
            let prompt = words.next()?.parse().ok()?;
            let reused = words.nth(1)?.parse().ok()?;
            Some((prompt, reused))
        })
        .collect()
}

#[test]
fn a_run_session_follows_up_with_the_first_task_s_tokens_reused() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let records = outside.path().join("records");
    let tmux = Tmux::start(
        Path::new(env!("CARGO_BIN_EXE_rein")),
        &[
            "run",
            "-i",
            "--model",
            "tiny",
            "--no-pull",
            "--profile",
            "naive",
            "--temperature",
            "0",
            "--max-turns",
            "2",
            "--reply-tokens",
            "64",
            "--ctx",
            "4096",
            "--threads",
            "2",
            "--workdir",
            dir.path().to_str().unwrap(),
            "--trace",
            outside.path().join("trace.jsonl").to_str().unwrap(),
        ],
        &[
            ("REIN_NO_PROMPT_CACHE", Path::new("1")),
            ("REIN_CONFIG_DIR", Path::new(NO_USER_CONFIG)),
            ("REIN_RUNS_DIR", &records),
        ],
    );
    tmux.wait("the greeting", |s| s.contains("/help lists the commands"));
    tmux.wait("prompt 1", |s| task_prompts(s) >= 1);
    tmux.line("Say hello.");
    tmux.wait("prompt 2", |s| task_prompts(s) >= 2);
    tmux.line("Say it again.");
    let screen = tmux.wait("prompt 3", |s| task_prompts(s) >= 3);
    let costs = costs(&screen);
    assert_eq!(costs.len(), 2, "{screen}");
    let ((first_prompt, _), (_, second_reused)) = (costs[0], costs[1]);
    assert!(
        second_reused >= first_prompt,
        "the follow-up reused {second_reused} tokens; the first task's prompt had {first_prompt}\n{screen}"
    );
    tmux.keys(&["C-d"], false);
    tmux.wait("the exit", |s| s.contains("program exited with status 0"));
}

#[test]
fn an_approval_answered_no_leaves_the_workspace_unchanged() {
    let (url, _) = scripted_server(vec![
        calls(
            "write_file",
            json!({"path": "notes.md", "content": "gone\n"}),
        ),
        says("I did not change it."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "keep me\n").unwrap();
    let trace = tempfile::tempdir().unwrap();
    let records = trace.path().join("records");
    let tmux = Tmux::start(
        Path::new(env!("CARGO_BIN_EXE_rein")),
        &[
            "run",
            "-i",
            "--backend",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
            "--profile",
            "naive",
            "--approve",
            "writes",
            "--workdir",
            dir.path().to_str().unwrap(),
            "--trace",
            trace.path().join("trace.jsonl").to_str().unwrap(),
        ],
        &[
            ("REIN_CONFIG_DIR", Path::new(NO_USER_CONFIG)),
            ("REIN_RUNS_DIR", &records),
        ],
    );
    tmux.wait("prompt 1", |s| task_prompts(s) >= 1);
    tmux.line("Replace notes.md with the word gone.");
    let screen = tmux.wait("the approval prompt", |s| s.contains("Run it? [y]es"));
    assert!(
        screen.contains("-keep me") && screen.contains("+gone"),
        "{screen}"
    );
    tmux.line("n");
    let screen = tmux.wait("prompt 2", |s| task_prompts(s) >= 2);
    assert!(screen.contains("I did not change it."), "{screen}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
        "keep me\n"
    );
    let entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["notes.md"], "{entries:?}");
    tmux.line("/bye");
    tmux.wait("the exit", |s| s.contains("program exited with status 0"));
}
