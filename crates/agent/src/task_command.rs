//! A command the task says to run ("Run `sh run_tests.sh` and tell me …"): until a
//! call has run it, a reply whose calls failed gets, after its last failed result, the
//! call that runs it.

use std::sync::OnceLock;

use regex::Regex;
use rein_engine::Backend;
use serde_json::Value;

use crate::agent::Agent;
use crate::call_outcome::CallOutcome;
use crate::state::RunState;
use crate::tool_names::SHELL_TOOL;
use crate::validate::ReadyCall;

/// The command in backticks right after "run" or "execute" in `task`, if any.
pub(crate) fn task_command(task: &str) -> Option<String> {
    static COMMAND: OnceLock<Option<Regex>> = OnceLock::new();
    let pattern = COMMAND
        .get_or_init(|| Regex::new(r"(?i)\b(?:run|execute)\s+`([^`\n]{2,200})`").ok())
        .as_ref()?;
    let command = pattern.captures(task)?.get(1)?.as_str().trim();
    (!command.is_empty()).then(|| command.to_string())
}

impl<B: Backend> Agent<B> {
    /// After a reply's calls ran: forgets the task's command once a shell call ran
    /// it; otherwise, when a call failed, the last failed result ends with the call
    /// that runs it.
    pub(crate) fn task_command_note(
        &self,
        run: &mut RunState,
        ready: &[ReadyCall],
        outcomes: &mut [CallOutcome],
    ) {
        let Some(command) = run.memory.task_command.clone() else {
            return;
        };
        if !self.tool_names.iter().any(|t| t == SHELL_TOOL) {
            return;
        }
        let ran = ready.iter().any(|call| {
            call.name == SHELL_TOOL
                && call
                    .arguments
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|written| written.contains(command.as_str()))
        });
        if ran {
            run.memory.task_command = None;
            return;
        }
        if let Some(failed) = outcomes.iter_mut().rev().find(|o| !o.ok) {
            failed.text.push_str(&format!(
                "\nThe task says to run `{command}`, and no call has run it yet. That call is:\n{}",
                self.info
                    .family
                    .call_text(SHELL_TOOL, &serde_json::json!({ "command": command }))
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::task_command;

    #[test]
    fn the_command_in_backticks_after_run_is_the_tasks_command() {
        assert_eq!(
            task_command("Run `sh run_tests.sh` and tell me the name of the test that failed.")
                .as_deref(),
            Some("sh run_tests.sh")
        );
        assert_eq!(
            task_command("Please execute `make check`, then report.").as_deref(),
            Some("make check")
        );
        assert_eq!(
            task_command("Follow README.md to run the stats script."),
            None
        );
        assert_eq!(task_command("In app.py, rename the function `calc`."), None);
    }
}
