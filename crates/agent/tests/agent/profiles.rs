//! The four profiles and the two tool formats: emulated calling, naive, ReAct and
//! structured runs.

use super::*;

#[test]
fn emulated_calling_teaches_the_format_and_rewrites_history() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with(
        dir.path(),
        vec![call("list_dir", r#"{"path": "."}"#), "empty".into()],
        false,
        RunConfig::new(Profile::Full),
    );
    let first = &r.agent.backend().requests[0];
    assert!(first.tools.is_none());
    assert!(first.messages[0]
        .content
        .as_deref()
        .unwrap()
        .contains("\"name\":\"read_file\""));
    let second = &r.agent.backend().requests[1].messages;
    assert!(second
        .iter()
        .all(|m| m.role != Role::Tool && m.tool_calls.is_empty()));
    assert!(second.iter().any(|m| m
        .content
        .as_deref()
        .unwrap_or_default()
        .contains("<tool_response>")));
}

#[test]
fn the_emulated_tool_format_overrides_a_native_template() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.tool_format = rein_format::ToolFormat::Emulated;
    let r = run_with(
        dir.path(),
        vec![call("list_dir", r#"{"path": "."}"#), "empty".into()],
        true,
        config,
    );
    let first = &r.agent.backend().requests[0];
    assert!(first.tools.is_none());
    assert!(first.messages[0]
        .content
        .as_deref()
        .unwrap()
        .contains("<tool_call>"));
    assert!(first.grammar.is_some());
    let second = &r.agent.backend().requests[1].messages;
    assert!(second
        .iter()
        .all(|m| m.role != Role::Tool && m.tool_calls.is_empty()));
    assert_eq!(r.result.tool_calls, 1);
}

#[test]
fn naive_reads_call_shaped_json_loosely_without_grammar_or_retry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_with(
        dir.path(),
        vec![
            "```json\n{\"function\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}\n```"
                .into(),
            "{\"name\": \"cat\", \"arguments\": {}}".into(),
            "It says alpha.".into(),
        ],
        true,
        RunConfig::new(Profile::Naive),
    );
    assert_eq!(r.result.answer.as_deref(), Some("It says alpha."));
    assert_eq!((r.result.tool_calls, r.result.tool_errors), (2, 1));
    let first = &r.agent.backend().requests[0];
    assert!(first.grammar.is_none() && first.tools.is_none());
    assert!(recoveries(&r.events).iter().all(|c| c == "tool_failure"));
}

#[test]
fn react_parses_actions_and_feeds_observations() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let r = run_with(
        dir.path(),
        vec![
            "Thought: read it\nAction: read_file\nAction Input: {\"path\": \"a.txt\"}".into(),
            "I am not sure.".into(),
            "Thought: done\nFinal Answer: alpha".into(),
        ],
        true,
        RunConfig::new(Profile::React),
    );
    assert_eq!(r.result.answer.as_deref(), Some("alpha"));
    let second = seen(&r, 1);
    assert!(
        second.contains("Observation:") && second.contains("alpha"),
        "{second}"
    );
    let third = seen(&r, 2);
    assert!(third.contains("Observation: Invalid format"), "{third}");
    assert_eq!(
        r.agent.backend().requests[0].stop,
        vec!["\nObservation:", "Observation:"]
    );
}

#[test]
fn structured_forces_calls_and_finishes_through_the_finish_tool() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_with(
        dir.path(),
        vec![
            "plain text is not allowed".into(),
            call("finish", r#"{"answer": "all done"}"#),
        ],
        true,
        RunConfig::new(Profile::Structured),
    );
    assert_eq!(r.result.stop_reason, StopReason::Finished);
    assert_eq!(r.result.answer.as_deref(), Some("all done"));
    let first = &r.agent.backend().requests[0];
    assert!(
        first.grammar.as_ref().unwrap().lazy_triggers.is_empty(),
        "every reply is a call"
    );
    // Blind retry: no note, the same context.
    assert_eq!(r.agent.backend().requests[1].messages.len(), 2);
}
