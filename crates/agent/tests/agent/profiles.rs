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

#[test]
fn an_opening_that_begins_calls_has_the_reply_decoded_as_the_template_s_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.call_intent = true;
    let backend = ScriptedBackend::new(
        [
            // The opening of turn 1, in another wrapper, then the reply itself.
            "<tools>\n{{\"name\": \"list_dir\"".to_string(),
            call("list_dir", r#"{"path": "."}"#),
            // Turn 2 opens prose and is decoded as before.
            "The workspace holds".to_string(),
            "The workspace holds one file, a.txt.".to_string(),
        ],
        true,
    )
    .with_grammar_decoding();
    let r = run_backend(dir.path(), backend, config);
    assert_eq!(r.result.stop_reason, StopReason::Answered, "{:?}", r.result);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("The workspace holds one file, a.txt.")
    );
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 4);
    // Openings are decoded without a grammar, a few tokens long.
    for opening in [&requests[0], &requests[2]] {
        assert!(opening.grammar.is_none());
        assert_eq!(opening.request.max_tokens, Some(12));
    }
    // The reply after a call-shaped opening: calls from the first token (no trigger).
    let calls = requests[1].grammar.as_ref().unwrap();
    assert!(calls.lazy_triggers.is_empty(), "{calls:?}");
    // The reply after a prose opening: the lazy `auto` grammar as without openings.
    let prose = requests[3].grammar.as_ref().unwrap();
    assert!(!prose.lazy_triggers.is_empty());
    let opened: Vec<_> = r
        .events
        .iter()
        .filter(|e| matches!(e, TraceEvent::OpeningRead { .. }))
        .collect();
    assert_eq!(opened.len(), 1);
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::FormatRepaired { .. })));
}

#[test]
fn without_grammar_decoding_no_opening_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.call_intent = true;
    let r = run_with(
        dir.path(),
        vec![
            call("list_dir", r#"{"path": "."}"#),
            "The workspace is empty.".into(),
        ],
        true,
        config,
    );
    assert_eq!(r.agent.backend().requests.len(), 2);
    assert_eq!(r.result.tool_calls, 1);
}

#[test]
fn a_result_written_out_as_the_opening_has_the_reply_decoded_as_prose() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RunConfig::new(Profile::Full);
    config.call_intent = true;
    let backend = ScriptedBackend::new(
        ["<tool_response>\nok", "No tool here can scale a recipe."],
        true,
    )
    .with_grammar_decoding();
    let r = run_backend(dir.path(), backend, config);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("No tool here can scale a recipe.")
    );
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 2);
    let prose = requests[1].grammar.as_ref().unwrap();
    assert!(prose.lazy_triggers.is_empty());
    assert!(prose.gbnf.contains("[A-Za-z0-9"), "{}", prose.gbnf);
    assert!(r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::OpeningRead { shape, .. } if shape == "answer")));
}
