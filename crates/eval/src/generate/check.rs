//! The self-check of a generated task: its known solution passes every grader, doing
//! nothing fails one, and the family's typical mistake fails one — graded by the same
//! graders a model's run gets, in a real workspace.

use std::path::Path;

use rein_protocol::{RunEvent, RunResult, StopReason};
use serde_json::json;

use super::{write_task, GenEnv, GenTask, Outcome};
use crate::grade::{Grade, GradeContext};
use crate::setup::prepare_workspace;
use crate::task::load_task;

/// The grades of the three outcomes of one task.
#[derive(Debug)]
pub struct CheckReport {
    /// The known solution's grades.
    pub solution: Vec<Grade>,
    /// Doing nothing's grades.
    pub nothing: Vec<Grade>,
    /// The typical mistake's grades.
    pub mistake: Vec<Grade>,
}

impl CheckReport {
    /// What is wrong, or `None` when the solution passes and the other two fail.
    pub fn problem(&self) -> Option<String> {
        let failed = |grades: &[Grade]| grades.iter().any(|g| !g.passed);
        let details = |grades: &[Grade]| {
            grades
                .iter()
                .map(|g| {
                    format!(
                        "{} {}: {}",
                        if g.passed { "ok" } else { "FAIL" },
                        g.grader,
                        g.detail
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        if failed(&self.solution) {
            Some(format!("the solution fails: {}", details(&self.solution)))
        } else if !failed(&self.nothing) {
            Some(format!("doing nothing passes: {}", details(&self.nothing)))
        } else if !failed(&self.mistake) {
            Some(format!("the mistake passes: {}", details(&self.mistake)))
        } else {
            None
        }
    }
}

/// Writes `task` under `scratch`, then grades its solution, nothing and its mistake.
pub fn self_check(
    scratch: &Path,
    family: &str,
    task: &GenTask,
    env: &GenEnv,
) -> Result<CheckReport, String> {
    let dir = scratch.join(super::SUITE).join(family);
    write_task(&dir, family, task, env).map_err(|e| e.to_string())?;
    let loaded = load_task(super::SUITE, &dir).map_err(|e| e.to_string())?;
    let grade = |outcome: &Outcome| -> Result<Vec<Grade>, String> {
        let workspace = prepare_workspace(&loaded).map_err(|e| e.to_string())?;
        apply(workspace.path(), outcome)?;
        let events = events_of(outcome);
        let result = result_of(outcome, &events);
        let context = GradeContext {
            task: &loaded,
            workspace: workspace.path(),
            result: &result,
            events: &events,
        };
        Ok(loaded
            .spec
            .grade
            .iter()
            .map(|g| g.grade(&context))
            .collect())
    };
    Ok(CheckReport {
        solution: grade(&task.solution)?,
        nothing: grade(&Outcome::default())?,
        mistake: grade(&task.mistake)?,
    })
}

/// Makes the outcome's changes in `root`: moves, removals, writes, then commands.
fn apply(root: &Path, outcome: &Outcome) -> Result<(), String> {
    for (from, to) in &outcome.moves {
        let target = root.join(to);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{to}: {e}"))?;
        }
        std::fs::rename(root.join(from), &target).map_err(|e| format!("move {from}: {e}"))?;
    }
    for path in &outcome.removes {
        std::fs::remove_file(root.join(path)).map_err(|e| format!("remove {path}: {e}"))?;
    }
    for (path, content) in &outcome.writes {
        let file = root.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{path}: {e}"))?;
        }
        std::fs::write(&file, content).map_err(|e| format!("write {path}: {e}"))?;
    }
    for command in &outcome.commands {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("`{command}`: {e}"))?;
        if !status.success() {
            return Err(format!("`{command}` failed: {status}"));
        }
    }
    Ok(())
}

/// The trace events of the outcome's calls: one `calls` event per reply, one result
/// per call.
fn events_of(outcome: &Outcome) -> Vec<RunEvent> {
    let mut events = Vec::new();
    for (turn, reply) in outcome.calls.iter().enumerate() {
        let turn = turn as u32 + 1;
        events.push(RunEvent::Calls {
            turn,
            calls: reply
                .iter()
                .enumerate()
                .map(|(i, (name, arguments))| {
                    json!({"id": format!("c{turn}-{i}"), "name": name, "arguments": arguments})
                })
                .collect(),
        });
        for (i, (name, arguments)) in reply.iter().enumerate() {
            events.push(RunEvent::ToolResult {
                turn,
                id: format!("c{turn}-{i}"),
                name: name.clone(),
                arguments: arguments.clone(),
                group: 0,
                ok: true,
                timed_out: false,
                output: String::new(),
                ms: 0,
            });
        }
    }
    events
}

fn result_of(outcome: &Outcome, events: &[RunEvent]) -> RunResult {
    let tool_calls = events
        .iter()
        .filter(|e| matches!(e, RunEvent::ToolResult { .. }))
        .count() as u32;
    RunResult {
        answer: outcome.answer.clone(),
        stop_reason: if outcome.answer.is_some() {
            StopReason::Answered
        } else {
            StopReason::MaxTurns
        },
        detail: None,
        turns: outcome.calls.len() as u32 + 1,
        tool_calls,
        tool_errors: 0,
        recoveries: Default::default(),
        rules: Default::default(),
        prompt_tokens: 0,
        completion_tokens: 0,
        evaluated_tokens: 0,
        reused_tokens: 0,
        first_ttft_ms: 0,
        wall_ms: 0,
        model_ms: 0,
        trace: None,
        model: String::new(),
        profile: String::new(),
    }
}
