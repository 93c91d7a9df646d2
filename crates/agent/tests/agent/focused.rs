//! Answers from the evidence (`focused_answer`): a question's answer-only turn is
//! asked on a context of its own, the question and the result lines that bear on it.

use rein_agent::{Profile, RunConfig};
use rein_protocol::{RunEvent as TraceEvent, StopReason};

use rein_test_support::ScriptedBackend;

use super::{call, run_backend_task, run_full, run_task};

const TASK: &str =
    "The logs/ directory holds the deploy log. Find the version that was deployed and answer with it.";

fn deploy_log(dir: &std::path::Path) {
    std::fs::create_dir(dir.join("logs")).unwrap();
    let mut log = String::new();
    for n in 0..40 {
        log.push_str(&format!("2026-10-01T00:{n:02}:00Z healthcheck ok\n"));
    }
    log.push_str("2026-10-01T01:00:00Z deployed version 2.7.1 to production\n");
    std::fs::write(dir.join("logs/deploy.log"), log).unwrap();
}

/// A workspace with `file` holding `text`; replies that search `pattern` three times
/// (so the next reply is decoded as the answer), then `answers`.
fn one_file_searched_then(
    file: &str,
    text: &str,
    pattern: &str,
    answers: &[&str],
) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    let search = call("search", &format!(r#"{{"pattern": "{pattern}"}}"#));
    let mut replies = vec![search.clone(), search.clone(), search];
    replies.extend(answers.iter().map(|a| a.to_string()));
    (dir, replies)
}

fn read_three_times_then(answer: &str) -> Vec<String> {
    let read = call("read_file", r#"{"path": "logs/deploy.log"}"#);
    vec![read.clone(), read.clone(), read, answer.into()]
}

#[test]
fn a_question_answered_after_repeats_is_asked_from_its_result_lines_alone() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    let r = run_full(dir.path(), TASK, read_three_times_then("2.7.1"));
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    assert_eq!(r.result.answer.as_deref(), Some("2.7.1"));
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 4);
    // The answer's turn: no tools, no history, the question and the lines.
    let focused = &requests[3];
    assert!(focused.tools.is_none());
    assert_eq!(focused.messages.len(), 1);
    let asked = focused.messages[0].content.as_deref().unwrap_or_default();
    assert!(asked.ends_with(TASK), "{asked}");
    assert!(
        asked.contains("From `read_file` {\"path\":\"logs/deploy.log\"}:"),
        "{asked}"
    );
    assert!(asked.contains("deployed version 2.7.1"), "{asked}");
    assert!(!asked.contains("healthcheck"), "{asked}");
    let shown = r.events.iter().find_map(|e| match e {
        TraceEvent::FocusedAnswer { turn, evidence } => Some((*turn, evidence.clone())),
        _ => None,
    });
    let (turn, evidence) = shown.expect("a focused_answer event");
    assert_eq!(turn, 4);
    assert!(evidence.contains("deployed version 2.7.1"), "{evidence}");
}

#[test]
fn switched_off_the_answer_is_asked_after_the_whole_conversation() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    let mut config = RunConfig::new(Profile::Full);
    config.set("focused_answer", "off").unwrap();
    let r = run_task(
        dir.path(),
        TASK,
        read_three_times_then("2.7.1"),
        true,
        config,
    );
    assert_eq!(r.result.answer.as_deref(), Some("2.7.1"));
    let last = &r.agent.backend().requests[3];
    assert!(last.messages.len() > 1);
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::FocusedAnswer { .. })));
}

#[test]
fn a_task_that_asks_for_a_change_is_never_answered_out_of_context() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    let task = "Write the deployed version from logs/deploy.log into VERSION.txt.";
    let r = run_full(dir.path(), task, read_three_times_then("done"));
    assert!(r
        .agent
        .backend()
        .requests
        .iter()
        .all(|request| request.messages.len() > 1));
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::FocusedAnswer { .. })));
}

#[test]
fn a_focused_answer_held_for_its_value_is_retried_with_the_note() {
    let task = "Some file in this project sets API_TOKEN_TTL. Find it and answer with the file's path and the value it sets.";
    let (dir, replies) = one_file_searched_then(
        ".config/service.env",
        "# service settings\nAPI_TOKEN_TTL=5400\n",
        "API_TOKEN_TTL",
        &[
            // A value no result shows: held once.
            "`.config/service.env` sets it to `3600`.",
            "`.config/service.env` sets API_TOKEN_TTL=5400.",
        ],
    );
    let r = run_full(dir.path(), task, replies);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("`.config/service.env` sets API_TOKEN_TTL=5400.")
    );
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 5);
    // Both answer turns are focused; the retry has the hold's note before the
    // question, the first try has none.
    let first = requests[3].messages[0]
        .content
        .as_deref()
        .unwrap_or_default();
    let retry = requests[4].messages[0]
        .content
        .as_deref()
        .unwrap_or_default();
    assert_eq!(requests[4].messages.len(), 1);
    assert!(!first.contains("3600"), "{first}");
    assert!(retry.contains("`3600`"), "{retry}");
    assert!(retry.ends_with(task), "{retry}");
    assert!(retry.contains("API_TOKEN_TTL=5400"), "{retry}");
}

#[test]
fn a_which_file_answer_off_by_case_is_held_once_and_never_rewritten() {
    let task = "Which file defines the class UserRepository? Answer with the file's path.";
    let (dir, replies) = one_file_searched_then(
        "Store/Accounts.py",
        "class UserRepository:\n    pass\n",
        "class UserRepository",
        &["It is store/accounts.py.", "It is Store/Accounts.py."],
    );
    let r = run_full(dir.path(), task, replies);
    // The model's own second answer, after a note naming the file that exists.
    assert_eq!(r.result.answer.as_deref(), Some("It is Store/Accounts.py."));
    let requests = &r.agent.backend().requests;
    let retry = requests.last().unwrap().messages[0]
        .content
        .as_deref()
        .unwrap_or_default();
    assert!(retry.contains("`Store/Accounts.py` is"), "{retry}");
    assert!(r.events.iter().any(|e| matches!(
        e,
        TraceEvent::RuleFired { rule, kind, .. } if rule == "near_miss_path" && kind == "hold"
    )));
    assert_eq!(r.result.rules.get("near_miss_path"), Some(&1));
    // Given again as written, the answer stays as written: nothing rewrites it.
    let wrong = "It is store/accounts.py.";
    let (dir, replies) = one_file_searched_then(
        "Store/Accounts.py",
        "class UserRepository:\n    pass\n",
        "class UserRepository",
        &[wrong, wrong],
    );
    let r = run_full(dir.path(), task, replies);
    assert_eq!(r.result.answer.as_deref(), Some("It is store/accounts.py."));
    // With the path rules off, the first answer is final.
    let mut config = RunConfig::new(Profile::Full);
    config.set("rule.near_miss_path", "off").unwrap();
    config.set("rule.no_path", "off").unwrap();
    let (dir, replies) = one_file_searched_then(
        "Store/Accounts.py",
        "class UserRepository:\n    pass\n",
        "class UserRepository",
        &["It is store/accounts.py."],
    );
    let r = run_task(dir.path(), task, replies, true, config);
    assert_eq!(r.result.answer.as_deref(), Some("It is store/accounts.py."));
    assert!(!r.result.rules.contains_key("near_miss_path"));
    assert!(!r.result.rules.contains_key("no_path"));
}

#[test]
fn a_reply_cut_for_looping_is_answered_from_the_lines_without_the_loops_note() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    let read = call("read_file", r#"{"path": "logs/deploy.log"}"#);
    let mut backend = ScriptedBackend::new([read.clone()], true);
    backend.push_looped(format!("{read}\n{read}\n{read}"));
    backend.push("2.7.1");
    let r = run_backend_task(dir.path(), TASK, backend, RunConfig::new(Profile::Full));
    assert_eq!(r.result.answer.as_deref(), Some("2.7.1"));
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 3);
    // The answer is asked on the focused context, and the loop's note (with the
    // result in full) stays out of it: the 0.5B model copied it as its answer.
    let focused = &requests[2];
    assert_eq!(focused.messages.len(), 1);
    let asked = focused.messages[0].content.as_deref().unwrap_or_default();
    assert!(asked.contains("deployed version 2.7.1"), "{asked}");
    assert!(!asked.contains("repeating"), "{asked}");
    assert!(asked.ends_with(TASK), "{asked}");
}

#[test]
fn a_focused_answer_is_not_held_for_a_call_planned_turns_before() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    let read = call("read_file", r#"{"path": "logs/deploy.log"}"#);
    // The read runs; the edit after it waits for its result (planned).
    let sprayed = [
        read.clone(),
        call(
            "edit_file",
            r#"{"path": "logs/deploy.log", "old_string": "2.7.1", "new_string": "2.7.2"}"#,
        ),
    ]
    .join("\n");
    let r = run_full(
        dir.path(),
        TASK,
        vec![sprayed, read.clone(), read, "2.7.1".into()],
    );
    assert_eq!(r.result.answer.as_deref(), Some("2.7.1"));
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::FocusedAnswer { .. })));
    assert!(!r.events.iter().any(|e| matches!(
        e,
        TraceEvent::Recovery { detail, .. } if detail.starts_with("planned_calls")
    )));
}

#[test]
fn a_question_s_last_turn_answers_though_a_call_waited() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    // The read runs; the edit after it waits for its result (planned), and is never
    // made; then another look.
    let sprayed = [
        call("read_file", r#"{"path": "logs/deploy.log"}"#),
        call(
            "edit_file",
            r#"{"path": "logs/deploy.log", "old_string": "2.7.1", "new_string": "2.7.2"}"#,
        ),
    ]
    .join("\n");
    let mut config = RunConfig::new(Profile::Full);
    config.max_turns = 3;
    let r = run_task(
        dir.path(),
        TASK,
        vec![
            sprayed,
            call("list_dir", r#"{"path": "logs"}"#),
            "2.7.1".into(),
        ],
        true,
        config,
    );
    assert_eq!(r.result.answer.as_deref(), Some("2.7.1"));
    assert_eq!(r.result.stop_reason, StopReason::Answered);
    // The last turn was asked as the answer, from the lines.
    let last = &r.agent.backend().requests[2];
    assert!(last.tools.is_none());
    assert_eq!(last.messages.len(), 1);
}
