//! Answers in the form the task asks: a sentence for a task that asks for the bare
//! value is asked once more, decoded as one of the values it states.

use super::*;

const TASK: &str = "How many hours did team alpha log in hours.csv? Reply with just the number.";

fn hours(dir: &Path) {
    std::fs::write(dir.join("hours.csv"), "team,hours\nalpha,185\nbeta,12\n").unwrap();
}

fn config() -> RunConfig {
    let mut config = RunConfig::new(Profile::Full);
    // The openings of `call_intent` are requests of their own; this test is about the
    // answer's form alone.
    config.call_intent = false;
    config
}

#[test]
fn a_sentence_for_a_bare_number_is_asked_again_as_one_of_its_numbers() {
    let dir = tempfile::tempdir().unwrap();
    hours(dir.path());
    let backend = ScriptedBackend::new(
        [
            call("read_file", r#"{"path": "hours.csv"}"#),
            "Team alpha logged 185 hours in 2 rows of hours.csv.".to_string(),
            "\"185\"".to_string(),
        ],
        true,
    )
    .with_grammar_decoding();
    let r = run_backend_task(dir.path(), TASK, backend, config());
    assert_eq!(r.result.stop_reason, StopReason::Answered, "{:?}", r.result);
    assert_eq!(r.result.answer.as_deref(), Some("185"));
    let requests = &r.agent.backend().requests;
    let asked = requests.last().unwrap();
    // Decoded as one of the numbers the answer states, after that answer and a note.
    let grammar = asked.grammar.as_ref().unwrap();
    assert!(grammar.lazy_triggers.is_empty(), "{grammar:?}");
    for number in ["185", "2"] {
        assert!(
            grammar.gbnf.contains(&format!("\\\"{number}\\\"")),
            "{}",
            grammar.gbnf
        );
    }
    // The answer whole is an option too.
    assert!(
        grammar.gbnf.contains("Team alpha logged 185 hours"),
        "{}",
        grammar.gbnf
    );
    let n = asked.messages.len();
    assert_eq!(
        asked.messages[n - 2].content.as_deref(),
        Some("Team alpha logged 185 hours in 2 rows of hours.csv.")
    );
    assert!(asked.messages[n - 1]
        .content
        .as_deref()
        .unwrap()
        .starts_with("The task asks for the number alone."));
    assert!(r.events.iter().any(|e| matches!(
        e,
        TraceEvent::RuleFired { rule, .. } if rule == "answer_form"
    )));
}

#[test]
fn a_bare_answer_a_backend_without_grammars_or_the_rule_off_keep_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    hours(dir.path());
    let replies = || {
        [
            call("read_file", r#"{"path": "hours.csv"}"#),
            "Team alpha logged 185 hours.".to_string(),
            "\"185\"".to_string(),
        ]
    };
    // A backend that ignores grammars (a remote one) is not asked.
    let r = run_backend_task(
        dir.path(),
        TASK,
        ScriptedBackend::new(replies(), true),
        config(),
    );
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Team alpha logged 185 hours.")
    );
    assert_eq!(r.agent.backend().requests.len(), 2);
    // The rule switched off.
    let mut off = config();
    off.rules.set(rein_agent::Rule::AnswerForm, false);
    let backend = ScriptedBackend::new(replies(), true).with_grammar_decoding();
    let r = run_backend_task(dir.path(), TASK, backend, off);
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Team alpha logged 185 hours.")
    );
    // A task that asks for a file: its answer reports the file.
    let backend = ScriptedBackend::new(
        [
            call("read_file", r#"{"path": "hours.csv"}"#),
            call("write_file", r#"{"path": "total.txt", "content": "185\n"}"#),
            "Wrote 185 into total.txt.".to_string(),
            "\"185\"".to_string(),
        ],
        true,
    )
    .with_grammar_decoding();
    let task =
        "Count the hours of team alpha in hours.csv and write just the number into total.txt.";
    let r = run_backend_task(dir.path(), task, backend, config());
    assert_eq!(
        r.result.answer.as_deref(),
        Some("Wrote 185 into total.txt.")
    );
    assert_eq!(r.agent.backend().requests.len(), 3);
    // An answer that already is the number.
    let backend = ScriptedBackend::new(
        [
            call("read_file", r#"{"path": "hours.csv"}"#),
            "185".to_string(),
        ],
        true,
    )
    .with_grammar_decoding();
    let r = run_backend_task(dir.path(), TASK, backend, config());
    assert_eq!(r.result.answer.as_deref(), Some("185"));
    assert_eq!(r.agent.backend().requests.len(), 2);
}

#[test]
fn an_answer_that_states_no_such_value_may_be_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    hours(dir.path());
    let answer = "hours.csv has no team gamma, so there are 0 hours to report.";
    let backend = ScriptedBackend::new(
        [
            call("read_file", r#"{"path": "hours.csv"}"#),
            answer.to_string(),
            serde_json::to_string(answer).unwrap(),
        ],
        true,
    )
    .with_grammar_decoding();
    let task = "How many hours did team gamma log in hours.csv? Reply with just the number.";
    let r = run_backend_task(dir.path(), task, backend, config());
    assert_eq!(r.result.answer.as_deref(), Some(answer));
    assert_eq!(r.agent.backend().requests.len(), 3);
}
