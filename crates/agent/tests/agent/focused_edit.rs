//! One-line changes asked on a context of their own (`focused_edit`): a failed change
//! of the task's file is followed by the `edit_file` call of the line the task's quoted
//! term picks, as the model changes it when asked for that line alone.

use rein_agent::{Profile, RunConfig};
use rein_protocol::{RunEvent as TraceEvent, StopReason};

use super::{call, run_full, run_task, seen, tool_outputs};

const TASK: &str = "Fix the spelling mistake 'recieve' in docs/guide.md.";
const LINE: &str = "To recieve updates, subscribe to the channel.";
const FIXED: &str = "To receive updates, subscribe to the channel.";

fn guide(dir: &std::path::Path) {
    std::fs::create_dir(dir.join("docs")).unwrap();
    std::fs::write(dir.join("docs/guide.md"), format!("# Guide\n\n{LINE}\n")).unwrap();
}

/// The `edit_file` call of `docs/guide.md` from `old` to `new`.
fn guide_edit(old: &str, new: &str) -> String {
    call(
        "edit_file",
        &format!(r#"{{"path": "docs/guide.md", "old_string": "{old}", "new_string": "{new}"}}"#),
    )
}

fn same_edit() -> String {
    guide_edit(LINE, LINE)
}

fn focused_edits(events: &[TraceEvent]) -> Vec<(Option<u32>, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            TraceEvent::FocusedEdit { line, new, .. } => Some((*line, new.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_edit_that_changes_nothing_is_followed_by_the_call_of_the_line_asked_alone() {
    let dir = tempfile::tempdir().unwrap();
    guide(dir.path());
    let fix = guide_edit(LINE, FIXED);
    let replies = vec![
        call("read_file", r#"{"path": "docs/guide.md"}"#),
        same_edit(),
        // The focused ask's reply, the way the 0.5B model wrote it.
        format!("```markdown\n{FIXED}\n```"),
        fix,
        "Fixed the spelling of receive in docs/guide.md.".into(),
    ];
    let r = run_full(dir.path(), TASK, replies);
    assert_eq!(r.result.stop_reason, StopReason::Answered, "{:?}", r.events);
    let fixed = std::fs::read_to_string(dir.path().join("docs/guide.md")).unwrap();
    assert_eq!(fixed, format!("# Guide\n\n{FIXED}\n"));
    let requests = &r.agent.backend().requests;
    assert_eq!(requests.len(), 5);
    // The focused ask: no tools, one message with the task and the line.
    let asked = &requests[2];
    assert!(asked.tools.is_none());
    assert_eq!(asked.messages.len(), 1);
    let text = asked.messages[0].content.as_deref().unwrap_or_default();
    assert!(text.starts_with(&format!("The task: {TASK}")), "{text}");
    assert!(
        text.contains(&format!("Line 3 of `docs/guide.md` now:\n{LINE}\n")),
        "{text}"
    );
    // The failed edit's result, as the next turn sees it, ends with the call.
    let next = seen(&r, 3);
    assert!(
        next.contains("old_string and new_string are identical"),
        "{next}"
    );
    assert!(
        next.contains(&format!(
            "With the task's change made, line 3 of `docs/guide.md` reads:\n{FIXED}\nThe call that makes that change:\n<tool_call>"
        )),
        "{next}"
    );
    assert!(
        next.contains(&format!("\"new_string\":\"{FIXED}\"")),
        "{next}"
    );
    assert_eq!(
        focused_edits(&r.events),
        vec![(Some(3), Some(FIXED.into()))]
    );
    let noted = r
        .events
        .iter()
        .any(|e| matches!(e, TraceEvent::ResultNote { note, .. } if note.contains(FIXED)));
    assert!(noted, "the call is traced as a note after the result");
}

#[test]
fn a_line_sent_back_unchanged_adds_nothing_and_is_asked_once() {
    let dir = tempfile::tempdir().unwrap();
    guide(dir.path());
    let replies = vec![
        same_edit(),
        LINE.to_string(),
        same_edit(),
        "I could not fix it.".into(),
        "I could not fix it.".into(),
        "I could not fix it.".into(),
    ];
    let mut config = RunConfig::new(Profile::Full);
    config.max_turns = 4;
    let r = run_task(dir.path(), TASK, replies, true, config);
    assert_eq!(focused_edits(&r.events), vec![(Some(3), None)]);
    for output in tool_outputs(&r.events) {
        assert!(
            !output.contains("The call that makes that change"),
            "{output}"
        );
    }
    let asked: Vec<_> = r
        .agent
        .backend()
        .requests
        .iter()
        .filter(|request| request.tools.is_none())
        .collect();
    assert_eq!(asked.len(), 1, "the line is asked once a run");
}

#[test]
fn switched_off_or_without_a_quoted_term_no_line_is_asked() {
    let replies = || {
        vec![
            same_edit(),
            "I could not fix it.".into(),
            "I could not fix it.".into(),
            "I could not fix it.".into(),
        ]
    };
    let dir = tempfile::tempdir().unwrap();
    guide(dir.path());
    let mut off = RunConfig::new(Profile::Full);
    off.set("focused_edit", "off").unwrap();
    off.max_turns = 3;
    let r = run_task(dir.path(), TASK, replies(), true, off);
    assert!(focused_edits(&r.events).is_empty());
    assert!(r.agent.backend().requests.iter().all(|q| q.tools.is_some()));

    let dir = tempfile::tempdir().unwrap();
    guide(dir.path());
    let mut config = RunConfig::new(Profile::Full);
    config.max_turns = 3;
    let unquoted = "Fix the spelling mistake in docs/guide.md.";
    let r = run_task(dir.path(), unquoted, replies(), true, config);
    assert_eq!(focused_edits(&r.events), vec![(None, None)]);
    assert!(r.agent.backend().requests.iter().all(|q| q.tools.is_some()));
}

#[test]
fn the_done_change_written_again_is_told_it_is_done() {
    let dir = tempfile::tempdir().unwrap();
    guide(dir.path());
    let fix = guide_edit(LINE, FIXED);
    let again = guide_edit(FIXED, FIXED);
    let replies = vec![fix, again, "Fixed the spelling in docs/guide.md.".into()];
    let r = run_full(dir.path(), TASK, replies);
    assert_eq!(r.result.stop_reason, StopReason::Answered, "{:?}", r.events);
    let outputs = tool_outputs(&r.events);
    assert_eq!(outputs.len(), 2);
    let next = seen(&r, 2);
    assert!(
        next.contains("`docs/guide.md` was changed in this run and already holds this text."),
        "{next}"
    );
    assert!(focused_edits(&r.events).is_empty(), "nothing to ask");
}

#[test]
fn a_rename_already_made_is_told_where_the_quoted_names_are() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "def calculate_total(prices):\n    return sum(prices)\n\nprint(calculate_total([3, 4]))\n",
    )
    .unwrap();
    let task = "In app.py, rename the function `calc` to `calculate_total` and update its call.";
    // The 0.5B model's edit in `traps`: text the file does not have.
    let edit = call(
        "edit_file",
        r#"{"path": "app.py", "old_string": "total = sum(prices)", "new_string": "total = 55"}"#,
    );
    let answer = "No change was needed: `calc` is already named `calculate_total`.";
    // The answer is held once (nothing changed), then taken.
    let replies = vec![edit, answer.into(), answer.into()];
    let r = run_full(dir.path(), task, replies);
    assert_eq!(r.result.stop_reason, StopReason::Answered, "{:?}", r.events);
    let next = seen(&r, 1);
    assert!(
        next.contains("Of the terms the task quotes, `calc` is in no line of `app.py` as a word; `calculate_total` is on lines 1, 4. If `app.py` already is as the task asks, reply that no change was needed and why."),
        "{next}"
    );
    assert_eq!(focused_edits(&r.events), vec![(None, None)]);
}
