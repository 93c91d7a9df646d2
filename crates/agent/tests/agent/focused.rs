//! Answers from the evidence (`focused_answer`): a question's answer-only turn is
//! asked on a context of its own, the question and the result lines that bear on it.

use rein_agent::{Profile, RunConfig};
use rein_protocol::{RunEvent as TraceEvent, StopReason};

use super::{call, run_task};

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

fn read_three_times_then(answer: &str) -> Vec<String> {
    let read = call("read_file", r#"{"path": "logs/deploy.log"}"#);
    vec![read.clone(), read.clone(), read, answer.into()]
}

#[test]
fn a_question_answered_after_repeats_is_asked_from_its_result_lines_alone() {
    let dir = tempfile::tempdir().unwrap();
    deploy_log(dir.path());
    let r = run_task(
        dir.path(),
        TASK,
        read_three_times_then("2.7.1"),
        true,
        RunConfig::new(Profile::Full),
    );
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
    let r = run_task(
        dir.path(),
        task,
        read_three_times_then("done"),
        true,
        RunConfig::new(Profile::Full),
    );
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
