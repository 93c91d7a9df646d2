//! Lookup runs (`answer_now`): tools that answer from outside the workspace, a reply
//! led by a call already made, a second call no request value grounds, and an
//! answer that repeats its own line.

use std::path::Path;
use std::sync::Arc;

use rein_agent::{Profile, RunConfig};
use rein_protocol::{FunctionSpec, RunEvent as TraceEvent, ToolSpec};
use rein_test_support::ScriptedBackend;
use rein_tools::{Access, Registry, Tool, ToolOutcome, Workspace};
use serde_json::{json, Value};

use super::{call, recoveries, run_with_tools, Run};

/// A tool that answers from a table, reading nothing of the workspace.
struct Lookup {
    name: &'static str,
    answers: Vec<(&'static str, &'static str)>,
}

impl Tool for Lookup {
    fn name(&self) -> &str {
        self.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            kind: "function".into(),
            function: FunctionSpec {
                name: self.name.into(),
                description: Some(format!("Looks up {}.", self.name)),
                parameters: Some(json!({
                    "type": "object",
                    "properties": {"key": {"type": "string"}},
                    "required": ["key"]
                })),
            },
        }
    }

    fn access(&self, _args: &Value, _workspace: &Workspace) -> Access {
        Access::Read(Vec::new())
    }

    fn call(&self, args: &Value, _workspace: &Workspace) -> ToolOutcome {
        let key = args["key"].as_str().unwrap_or_default();
        let answer = self
            .answers
            .iter()
            .find(|(known, _)| *known == key)
            .map_or("Error: unknown key.", |(_, answer)| answer);
        ToolOutcome::success(answer)
    }
}

/// Runs under `full` with the answer asked after the whole conversation (these tests
/// read the notes that conversation carries; `focused` tests the focused turn).
fn run_lookups(dir: &Path, task: &str, backend: ScriptedBackend) -> Run {
    run_lookups_with(dir, task, backend, whole_context())
}

fn whole_context() -> RunConfig {
    let mut config = RunConfig::new(Profile::Full);
    config.focused_answer = false;
    config
}

fn run_lookups_with(dir: &Path, task: &str, backend: ScriptedBackend, config: RunConfig) -> Run {
    let mut registry = Registry::builtin();
    registry.add(Arc::new(Lookup {
        name: "get_weather",
        answers: vec![
            ("Oslo", "Oslo: 9.4 °C, overcast"),
            ("Madrid", "Madrid: 31.7 °C, sunny"),
        ],
    }));
    registry.add(Arc::new(Lookup {
        name: "send_report",
        answers: vec![],
    }));
    run_with_tools(dir, task, backend, &registry, config)
}

fn weather(city: &str) -> String {
    call("get_weather", &format!(r#"{{"key": "{city}"}}"#))
}

fn ran(events: &[TraceEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::ToolResult {
                name, arguments, ..
            } => Some(format!("{name} {arguments}")),
            _ => None,
        })
        .collect()
}

fn last_note(run: &Run, request: usize) -> String {
    let messages = &run.agent.backend().requests[request].messages;
    messages
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default()
}

const TASK: &str = "What is the weather in Oslo and in Madrid?";

#[test]
fn a_lookup_reply_led_by_a_call_already_made_is_answered_from_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let first = [weather("Oslo"), weather("Madrid")].join("\n");
    let again = [
        weather("Oslo"),
        weather("Lima"),
        call("send_report", r#"{"key": "Oslo"}"#),
    ]
    .join("\n");
    let backend = ScriptedBackend::new(
        vec![
            first,
            again,
            "Oslo has 9.4 °C and Madrid 31.7 °C.".to_string(),
        ],
        true,
    );
    let r = run_lookups(dir.path(), TASK, backend);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Oslo has 9.4 °C and Madrid 31.7 °C.")
    );
    // Nothing of the second reply ran, and the retry was decoded as an answer.
    assert_eq!(
        ran(&r.events),
        vec![
            r#"get_weather {"key":"Oslo"}"#,
            r#"get_weather {"key":"Madrid"}"#
        ]
    );
    assert_eq!(recoveries(&r.events), vec!["repetition"]);
    let requests = &r.agent.backend().requests;
    assert!(requests[2].request.prose && !requests[1].request.prose);
    let note = last_note(&r, 2);
    assert!(
        note.starts_with("Your reply began with `get_weather` again")
            && note.contains("Oslo: 9.4 °C, overcast")
            && note.contains("Madrid: 31.7 °C, sunny")
            && note.contains(&format!("Answer the request ({TASK}) now")),
        "{note}"
    );
}

#[test]
fn a_repeat_led_reply_of_workspace_steps_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "Oslo is cold.\n").unwrap();
    // The next step reads the workspace: it runs (the repeat is answered from memory).
    let again = [
        weather("Oslo"),
        call("read_file", r#"{"path": "notes.txt"}"#),
    ]
    .join("\n");
    let backend = ScriptedBackend::new(
        vec![weather("Oslo"), again, "Cold: 9.4 °C.".to_string()],
        true,
    );
    let r = run_lookups(dir.path(), "How cold is it in Oslo?", backend);
    assert_eq!(r.result.answer.as_deref(), Some("Cold: 9.4 °C."));
    assert_eq!(
        ran(&r.events),
        vec![
            r#"get_weather {"key":"Oslo"}"#,
            r#"read_file {"path":"notes.txt"}"#
        ]
    );
}

#[test]
fn a_second_ungrounded_lookup_is_a_request_no_tool_fits() {
    let dir = tempfile::tempdir().unwrap();
    let rome = call("get_weather", r#"{"key": "Rome"}"#);
    let backend = ScriptedBackend::new(
        vec![rome.clone(), rome, "12 times 12 is 144.".to_string()],
        true,
    );
    let r = run_lookups(dir.path(), "What is 12 times 12?", backend);
    assert_eq!(r.result.answer.as_deref(), Some("12 times 12 is 144."));
    assert!(ran(&r.events).is_empty());
    assert_eq!(recoveries(&r.events), vec!["ungrounded", "ungrounded"]);
    let requests = &r.agent.backend().requests;
    assert!(!requests[1].request.prose && requests[2].request.prose);
    let note = last_note(&r, 2);
    assert_eq!(
        note,
        "`get_weather` was not run: no tool fits. Answer it yourself, from what you know: What is 12 times 12?"
    );
    // The answer is the model's own, however it ends; a copy of the note is not one.
    let rome = call("get_weather", r#"{"key": "Rome"}"#);
    let worked = "12 * 12 = 144.\nTherefore, the final answer is:";
    let backend = ScriptedBackend::new(
        vec![
            rome.clone(),
            rome.clone(),
            "The function `get_weather` was not run: no tool fits. Answer it yourself, from what you know.".to_string(),
            worked.to_string(),
        ],
        true,
    );
    let r = run_lookups(dir.path(), "What is 12 times 12?", backend);
    assert_eq!(r.result.answer.as_deref(), Some(worked));
    assert_eq!(
        recoveries(&r.events),
        vec!["ungrounded", "ungrounded", "not_an_answer"]
    );
    // Nor is a reply about the tools: it is asked once more, as the answer.
    for about in ["No tool fits.", "No tool can run."] {
        let backend = ScriptedBackend::new(
            vec![
                rome.clone(),
                rome.clone(),
                about.to_string(),
                "144".to_string(),
            ],
            true,
        );
        let r = run_lookups(dir.path(), "What is 12 times 12?", backend);
        assert_eq!(r.result.answer.as_deref(), Some("144"), "{about}");
        assert!(r.agent.backend().requests[3].request.prose);
        assert!(
            last_note(&r, 3).ends_with("in one or two sentences: What is 12 times 12?"),
            "{}",
            last_note(&r, 3)
        );
    }
}

#[test]
fn the_last_turn_the_budget_allows_is_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let backend = ScriptedBackend::new(
        vec![
            weather("Oslo"),
            weather("Madrid"),
            "Oslo: 9.4 °C, Madrid: 31.7 °C.".to_string(),
        ],
        true,
    );
    let mut config = whole_context();
    config.max_turns = 3;
    let r = run_lookups_with(dir.path(), TASK, backend, config);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Oslo: 9.4 °C, Madrid: 31.7 °C.")
    );
    let requests = &r.agent.backend().requests;
    assert!(!requests[1].request.prose && requests[2].request.prose);
    assert!(
        last_note(&r, 2).ends_with(
            "This is the last turn: reply to the task now with what the results above say."
        ),
        "{}",
        last_note(&r, 2)
    );
}

#[test]
fn an_answer_that_repeats_its_line_is_that_line() {
    let dir = tempfile::tempdir().unwrap();
    let oslo = weather("Oslo");
    let mut backend = ScriptedBackend::new(vec![oslo.clone(), oslo.clone(), oslo], true);
    backend.push_looped("Oslo: 9.4 °C, overcast\nOslo: 9.4 °C, overcast\nOslo: 9.4");
    let r = run_lookups(dir.path(), "What is the weather in Oslo?", backend);
    // The second repeat decodes the next reply as an answer; its loop is cut to one line.
    assert_eq!(r.result.answer.as_deref(), Some("Oslo: 9.4 °C, overcast"));
    assert_eq!(r.result.stop_reason, rein_protocol::StopReason::Answered);
    // That reply had the request and the results after the repeat's result.
    let last = last_note(&r, 3);
    assert!(
        last.contains("Answer the request (What is the weather in Oslo?) now in plain words, with the values these results give:\n- `get_weather` {\"key\":\"Oslo\"}:\nOslo: 9.4 °C, overcast"),
        "{last}"
    );
}

#[test]
fn a_second_call_to_no_tool_before_any_call_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let multiply = call("multiply", r#"{"a": 12, "b": 12}"#);
    let backend = ScriptedBackend::new(vec![multiply.clone(), multiply, "144".to_string()], true);
    let r = run_lookups(dir.path(), "What is 12 times 12?", backend);
    assert_eq!(r.result.answer.as_deref(), Some("144"));
    assert_eq!(recoveries(&r.events), vec!["unknown_tool", "unknown_tool"]);
    let requests = &r.agent.backend().requests;
    // The first retry may still call a tool; the second is decoded as the answer.
    assert!(!requests[1].request.prose && requests[2].request.prose);
    let note = last_note(&r, 2);
    assert!(
        note.starts_with("There is no tool `multiply`.")
            && note.ends_with("Answer it yourself, from what you know: What is 12 times 12?"),
        "{note}"
    );
}

#[test]
fn a_narration_after_calls_made_at_once_gets_all_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let both = [weather("Oslo"), weather("Madrid")].join("\n");
    let backend = ScriptedBackend::new(
        vec![
            both,
            "To get the weather for both cities, I called the `get_weather` function twice."
                .to_string(),
            "Oslo: 9.4 °C; Madrid: 31.7 °C.".to_string(),
        ],
        true,
    );
    let r = run_lookups(dir.path(), TASK, backend);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Oslo: 9.4 °C; Madrid: 31.7 °C.")
    );
    let note = last_note(&r, 2);
    assert!(
        note.contains("Oslo: 9.4 °C, overcast\nMadrid: 31.7 °C, sunny"),
        "{note}"
    );
}
