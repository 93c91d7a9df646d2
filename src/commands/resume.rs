//! What `rein run --resume TRACE` goes on from: the task and the conversation an
//! earlier run recorded in its trace when it stopped.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rein_protocol::{Message, Role, RunEvent};

/// An earlier run that stopped before it answered.
#[derive(Debug, Clone)]
pub struct EarlierRun {
    /// Its trace.
    pub trace: PathBuf,
    /// Its task.
    pub task: String,
    /// Its conversation when it stopped, ready for the next request.
    pub history: Vec<Message>,
}

/// Reads the run `trace` recorded, whether it ended (Ctrl-C, a budget, an error) or was
/// killed. Refused with a message: a trace with no run, a run that answered (nothing is
/// left to do), and one without its conversation (killed before its first turn, or
/// recorded by a rein without `--resume`).
pub fn earlier_run(trace: &Path) -> anyhow::Result<EarlierRun> {
    let events = rein_protocol::read_trace(trace)
        .with_context(|| format!("--resume {}", trace.display()))?;
    from_events(trace, &events)
}

fn from_events(trace: &Path, events: &[RunEvent]) -> anyhow::Result<EarlierRun> {
    let shown = trace.display();
    let task = events
        .iter()
        .rev()
        .find_map(|event| match event {
            RunEvent::RunStart { task, .. } => Some(task.clone()),
            _ => None,
        })
        .with_context(|| format!("--resume {shown}: the trace holds no run"))?;
    let stopped = events.iter().rev().find_map(|event| match event {
        RunEvent::RunEnd { result } => result["stop_reason"].as_str().map(str::to_string),
        _ => None,
    });
    if let Some(reason @ ("answered" | "finished")) = stopped.as_deref() {
        anyhow::bail!(
            "--resume {shown}: that run ended with an answer ({reason}); there is nothing to go on with. Start a new run for a follow-up."
        );
    }
    let mut history = rein_protocol::recorded_history(events);
    if history.is_empty() {
        anyhow::bail!(
            "--resume {shown}: the trace holds no conversation to go on from (the run was killed before its first turn, or a rein without --resume recorded it)"
        );
    }
    // A conversation that ends with the model's own words asks the model to go on.
    if history
        .last()
        .is_none_or(|message| message.role == Role::Assistant)
    {
        history.push(Message::user(
            "You were stopped here. Go on with the task from where you stopped.",
        ));
    }
    Ok(EarlierRun {
        trace: trace.to_path_buf(),
        task,
        history,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start(task: &str) -> RunEvent {
        RunEvent::RunStart {
            task: task.into(),
            model: "m".into(),
            profile: "full".into(),
            version: "0".into(),
            settings: json!({}),
            tools: vec![],
            facts: vec![],
        }
    }

    fn end(reason: &str) -> RunEvent {
        RunEvent::RunEnd {
            result: json!({ "stop_reason": reason }),
        }
    }

    fn history(messages: Vec<Message>) -> RunEvent {
        RunEvent::History { from: 0, messages }
    }

    #[test]
    fn takes_the_task_and_the_last_conversation() {
        let messages = vec![Message::system("s"), Message::user("do it")];
        let events = [
            start("do it"),
            history(messages.clone()),
            end("interrupted"),
        ];
        let earlier = from_events(Path::new("t.jsonl"), &events).unwrap();
        assert_eq!(earlier.task, "do it");
        assert_eq!(earlier.history, messages);
    }

    #[test]
    fn a_killed_run_is_rebuilt_from_its_steps() {
        let step = |from, messages| RunEvent::History { from, messages };
        let events = [
            start("do it"),
            step(0, vec![Message::system("s"), Message::user("do it")]),
            step(2, vec![Message::assistant("a"), Message::user("r1")]),
            // A compacted conversation: the third message replaced.
            step(2, vec![Message::user("r1 (shortened)")]),
        ];
        let earlier = from_events(Path::new("t.jsonl"), &events).unwrap();
        let texts: Vec<_> = earlier
            .history
            .iter()
            .map(|m| m.content.clone().unwrap())
            .collect();
        assert_eq!(texts, ["s", "do it", "r1 (shortened)"]);
    }

    #[test]
    fn a_conversation_ending_with_the_model_asks_it_to_go_on() {
        let messages = vec![Message::user("do it"), Message::assistant("I will")];
        let events = [start("do it"), history(messages), end("max_turns")];
        let earlier = from_events(Path::new("t.jsonl"), &events).unwrap();
        assert_eq!(earlier.history.len(), 3);
        assert_eq!(earlier.history[2].role, Role::User);
    }

    #[test]
    fn refuses_an_answered_run_and_a_trace_without_a_conversation() {
        let answered = [
            start("q"),
            history(vec![Message::user("q")]),
            end("answered"),
        ];
        let error = from_events(Path::new("t.jsonl"), &answered).unwrap_err();
        assert!(
            error.to_string().contains("ended with an answer"),
            "{error}"
        );
        let killed_at_once = [start("q")];
        let error = from_events(Path::new("t.jsonl"), &killed_at_once).unwrap_err();
        assert!(error.to_string().contains("no conversation"), "{error}");
        let error = from_events(Path::new("t.jsonl"), &[]).unwrap_err();
        assert!(error.to_string().contains("no run"), "{error}");
    }
}
