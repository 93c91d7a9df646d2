//! Answers held back with one specific note (the `full` profile): why each is held
//! (a reply that is not an answer yet — see `not_an_answer` —, an answer while the
//! output file the task names does not exist, while the file it asks to change is
//! unchanged, before any look at a path it names, before anything changed when it
//! asks for a change, or after source edits that were never checked), the note each
//! hold sends, and the caps that bound them, so a run always ends.

use crate::not_an_answer::NotAnswer;

/// Why an answer is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Held {
    /// Source files were edited and nothing checked them since.
    Unverified(Vec<String>),
    /// The reply talks about a step instead of taking it.
    NotAnAnswer(NotAnswer),
    /// The task's output file does not exist; whether the reply talks of another step
    /// than the write (a plan, an announced or narrated look).
    MissingOutput(String, bool),
    /// The file the task asks to change is as it was.
    Unchanged(String),
    /// Calls the model planned (deferred for an earlier result) never ran.
    PlannedCalls(Vec<String>),
    /// The answer states a value no result shows (and the longer path a result
    /// writes that ends with it).
    Unsupported(String, Option<String>),
    /// The task asks for a new file and no call has written anything.
    NothingWritten,
    /// The task asks for a change and no call that may change something succeeded.
    NothingChanged,
    /// The file the task asks to change is as it was, and the answer describes the
    /// change of one of its lines.
    DescribedEdit(String, crate::described_edit::LineEdit),
    /// Nothing was looked at, and the task names this path of the workspace (or, with
    /// none, the answer names a file that is not in it).
    NotLooked(Option<crate::task_paths::TaskPath>),
    /// The answer names a file this run wrote (path, content) instead of telling what
    /// the task asked, and the task asked for no file.
    StoredInstead(String, String),
    /// The answer names another item of a compared list than the task's superlative
    /// picks.
    WrongPick(crate::extreme_pick::WrongPick),
    /// The task asks for a file's path and the answer names none, while this tool's
    /// result (tool, result) names a file of the workspace.
    NoPath(String, String),
    /// The task asks for a file's path and the answer writes one (said) that misses
    /// exactly one file of the workspace (path) only by case or a leading dot.
    NearMissPath(String, String),
}

impl Held {
    /// The note the model gets.
    pub(crate) fn note(&self) -> String {
        match self {
            Held::Unverified(files) => verification_note(files),
            Held::NotAnAnswer(why) => format!(
                "That was not an answer: {why}. Tools run only when you call them. Make the call now, or, if the task is done, reply with the final result itself."
            ),
            Held::MissingOutput(file, _) => format!(
                "The task asks for `{file}`, and it does not exist yet. If you have not found what goes in it, find it first (search, read_file); then write it with write_file, the whole content, and reply with a short final answer."
            ),
            Held::Unchanged(file) => format!(
                "The task asks you to change `{file}`, and it is still unchanged. Make that change now with edit_file (read or search the part to change first if you have not seen it), then reply with a short final answer."
            ),
            Held::Unsupported(value, meant) => {
                crate::supported::unsupported_note(value, meant.as_deref())
            }
            Held::DescribedEdit(file, edit) => format!(
                "Not done yet: `{file}` is still unchanged. Your answer describes changing the line `{}` to `{}`: make that change now with edit_file, then reply with a short final answer.",
                edit.old, edit.new
            ),
            Held::NotLooked(Some(named)) => format!(
                "Not answered yet: no call has looked at the workspace, and the task names `{}`, which is there. Look at it first ({}), then answer from what it shows.",
                named.path,
                if named.dir { "list_dir" } else { "read_file" }
            ),
            Held::NotLooked(None) => "Not answered yet: no call has looked at the workspace, and the file your answer names is not in it. Look first: search the workspace for what the task names (search), or list it (list_dir); then answer from what you find.".to_string(),
            Held::NothingChanged => "Not done yet: the task asks for a change, and no call of this run has changed anything. If the files already are as the task asks, reply that no change was needed and why; otherwise make the change now (edit_file for part of a file, write_file for a whole new one), then reply with a short final answer.".to_string(),
            Held::NothingWritten => "Not done yet: the task asks for a file to be written, and no call has written anything. Write it now with write_file (the path and the content the task asks for, from the results above), then reply with a short final answer.".to_string(),
            Held::StoredInstead(path, content) => {
                crate::stored_answer::stored_note(path, content)
            }
            Held::WrongPick(pick) => crate::extreme_pick::wrong_pick_note(pick),
            Held::NoPath(tool, result) => crate::path_answer::no_path_note(tool, result),
            Held::NearMissPath(said, path) => crate::path_answer::near_miss_note(said, path),
            Held::PlannedCalls(tools) => format!(
                "Not done yet: your earlier reply also called {}, and that call has not run (it waited for a result that is here now). Make it now, with values from the results above; if it is not needed after all, reply with the final answer.",
                backticked_list(tools)
            ),
        }
    }

    /// The rule that holds an answer so (see `rules`).
    pub(crate) fn rule(&self) -> crate::rules::Rule {
        use crate::rules::Rule;
        match self {
            Held::Unverified(_) => Rule::Unverified,
            Held::NotAnAnswer(why) if why.is_call_shaped() => Rule::CallShaped,
            Held::NotAnAnswer(_) => Rule::NotAnAnswer,
            Held::MissingOutput(..) => Rule::MissingOutput,
            Held::Unchanged(_) => Rule::UnchangedFile,
            Held::PlannedCalls(_) => Rule::PlannedCalls,
            Held::Unsupported(..) => Rule::UnsupportedValue,
            Held::NothingWritten => Rule::NothingWritten,
            Held::NothingChanged => Rule::NothingChanged,
            Held::NotLooked(_) => Rule::NotLooked,
            Held::DescribedEdit(..) => Rule::DescribedEdit,
            Held::StoredInstead(..) => Rule::StoredInstead,
            Held::WrongPick(_) => Rule::WrongPick,
            Held::NoPath(..) => Rule::NoPath,
            Held::NearMissPath(..) => Rule::NearMissPath,
        }
    }

    /// The kind, for the trace.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Held::Unverified(_) => "unverified_edits",
            Held::NotAnAnswer(_) => "not_an_answer",
            Held::MissingOutput(..) => "missing_output",
            Held::Unchanged(_) => "unchanged_file",
            Held::PlannedCalls(_) => "planned_calls",
            Held::Unsupported(..) => "unsupported_value",
            Held::NothingWritten => "nothing_written",
            Held::NothingChanged => "nothing_changed",
            Held::NotLooked(_) => "not_looked",
            Held::DescribedEdit(..) => "described_edit",
            Held::StoredInstead(..) => "stored_instead",
            Held::WrongPick(_) => "wrong_pick",
            Held::NoPath(..) => "no_path",
            Held::NearMissPath(..) => "near_miss_path",
        }
    }
}

/// `names` (tools, paths) as the notes write them: `` `a`, `b` ``.
pub(crate) fn backticked_list(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|t| format!("`{t}`")).collect();
    names.join(", ")
}

/// How often each hold may happen in one run.
#[derive(Debug, Default, Clone)]
pub(crate) struct HoldCounts {
    /// Verification holds.
    pub unverified: u32,
    /// Non-answer holds.
    pub not_an_answer: u32,
    /// Missing-output holds.
    pub missing_output: u32,
    /// Unchanged-file holds.
    pub unchanged: u32,
    /// Planned-call holds.
    pub planned: u32,
    /// Unsupported-value holds.
    pub unsupported: u32,
    /// Nothing-written holds.
    pub nothing_written: u32,
    /// Nothing-changed holds.
    pub nothing_changed: u32,
    /// Not-looked holds.
    pub not_looked: u32,
    /// Described-edit holds.
    pub described_edit: u32,
    /// Stored-instead holds.
    pub stored_instead: u32,
    /// Wrong-pick holds.
    pub wrong_pick: u32,
    /// No-path holds.
    pub no_path: u32,
    /// Near-miss-path holds.
    pub near_miss_path: u32,
}

impl HoldCounts {
    /// Whether `held` may still happen (without counting it).
    pub(crate) fn has_room(&self, held: &Held) -> bool {
        self.clone().allow(held)
    }

    /// Whether `held` may still happen, counting it when it may.
    pub(crate) fn allow(&mut self, held: &Held) -> bool {
        let (count, cap) = match held {
            Held::Unverified(_) => (&mut self.unverified, 2),
            Held::NotAnAnswer(_) => (&mut self.not_an_answer, 3),
            // A plan of another step is counted with the other holds of steps talked
            // about, so the one hold of a claim to be done stays for later.
            Held::MissingOutput(_, true) => (&mut self.not_an_answer, 3),
            Held::MissingOutput(_, false) => (&mut self.missing_output, 1),
            Held::Unchanged(_) => (&mut self.unchanged, 1),
            Held::PlannedCalls(_) => (&mut self.planned, 1),
            Held::Unsupported(..) => (&mut self.unsupported, 1),
            Held::NothingWritten => (&mut self.nothing_written, 1),
            Held::NothingChanged => (&mut self.nothing_changed, 1),
            Held::NotLooked(_) => (&mut self.not_looked, 1),
            Held::DescribedEdit(..) => (&mut self.described_edit, 1),
            Held::StoredInstead(..) => (&mut self.stored_instead, 1),
            Held::WrongPick(_) => (&mut self.wrong_pick, 1),
            Held::NoPath(..) => (&mut self.no_path, 1),
            Held::NearMissPath(..) => (&mut self.near_miss_path, 1),
        };
        if *count >= cap {
            return false;
        }
        *count += 1;
        true
    }
}

/// The note that holds back a final answer until the edits are verified.
fn verification_note(files: &[String]) -> String {
    format!(
        "Before you finish: you changed {} but ran no build or test since. Run the project's check (for example its tests) and report the result; if no check applies, say so and give the final answer.",
        files.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hold_is_bounded() {
        let mut counts = HoldCounts::default();
        let missing = Held::MissingOutput("a.md".into(), false);
        assert!(counts.allow(&missing));
        assert!(!counts.allow(&missing));
        let not = Held::NotAnAnswer(NotAnswer::Announces);
        assert!(counts.allow(&not) && counts.allow(&not) && counts.allow(&not));
        assert!(!counts.allow(&not));
    }
}
