//! What the answer guards of `full` look up in the workspace and the results: whether
//! an answer came before any look at a path the task names (and the call that looks
//! at it), whether it states a value the latest result shows, and the one-line edit it
//! describes (with the `edit_file` call that makes it).

use rein_engine::Backend;

use crate::agent::Agent;
use crate::described_edit::{described_edit, LineEdit};
use crate::guards::Held;
use crate::state::RunState;
use crate::tool_names::{EDIT_TOOL, READ_TOOL};

impl<B: Backend> Agent<B> {
    /// The hold of an answer given before any call ran, in a task about the
    /// workspace: it names a path that is there, or the answer names a file that is
    /// not (the model answering from what it imagines).
    pub(crate) fn not_looked(&self, run: &RunState, text: &str) -> Option<Held> {
        if run.tool_calls > 0 || !self.tool_names.iter().any(|t| t == READ_TOOL) {
            return None;
        }
        let held = match run.memory.task_paths.first() {
            Some(named) => Held::NotLooked(Some(named.clone())),
            None => {
                let task = run.task();
                let workspace = &self.executor.workspace;
                let imagined = crate::task_paths::asks_about_files(task)
                    && crate::task_paths::absent_file(text, workspace).is_some();
                if !imagined {
                    return None;
                }
                Held::NotLooked(None)
            }
        };
        (self.config.rules.on(held.rule()) && run.holds.has_room(&held)).then_some(held)
    }

    /// Whether `text` states a value the latest successful result shows and the task
    /// does not (see `supported::quotes_result`).
    pub(crate) fn quotes_latest_result(&self, run: &RunState, text: &str) -> bool {
        let latest = run
            .history
            .iter()
            .rev()
            .filter(|m| m.role == rein_protocol::Role::Tool)
            .filter_map(|m| m.content.as_deref())
            .find(|content| {
                run.memory
                    .succeeded_calls
                    .values()
                    .any(|(result, _)| content.starts_with(result.as_str()))
            });
        latest.is_some_and(|result| crate::supported::quotes_result(text, result, run.task()))
    }

    /// The one-line edit of `file` that `text` describes, if it describes one.
    pub(crate) fn described_edit(&self, file: &str, text: &str) -> Option<LineEdit> {
        if !self.tool_names.iter().any(|t| t == EDIT_TOOL) {
            return None;
        }
        let path = self.executor.workspace.resolve(file).ok()?;
        let content = std::fs::read_to_string(path).ok()?;
        described_edit(text, &content)
    }

    /// The `edit_file` call that makes `edit` in `file`, in the model's call syntax.
    pub(crate) fn edit_call(&self, file: &str, edit: &LineEdit) -> String {
        self.info.family.call_text(
            EDIT_TOOL,
            &serde_json::json!({"path": file, "old_string": edit.old, "new_string": edit.new}),
        )
    }
}
