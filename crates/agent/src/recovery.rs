//! Classified recovery: what went wrong with a step, the short note the model gets,
//! and how many times in a row each class is tolerated before the run gives up.

use serde::{Deserialize, Serialize};

/// The detail of a [`FailureClass::Format`] retry after a reply with no text at all:
/// no call was attempted (compliance tallies leave it out).
pub const EMPTY_REPLY: &str = "the reply was empty";

/// The kinds of failure the loop recovers from, each with its own note and cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The reply could not be read as calls.
    Format,
    /// A call named a tool that does not exist (and no obvious repair applied).
    UnknownTool,
    /// A call's arguments do not fit the tool's schema.
    Schema,
    /// The tool ran and failed.
    ToolFailure,
    /// The tool ran out of time.
    ToolTimeout,
    /// The token limit cut the reply inside a call.
    Truncated,
    /// The same failing call again, or a reply that repeated itself.
    Repetition,
    /// A reply that narrates or announces a step instead of answering.
    NotAnAnswer,
    /// An answer while the file the task asks for does not exist.
    MissingOutput,
    /// A first call whose values the request never gave (held once: no tool may fit).
    Ungrounded,
    /// A call with an identifier nothing in the conversation showed (not run).
    Guessed,
}

impl FailureClass {
    /// Every class, in a fixed order (for reports).
    pub const ALL: [FailureClass; 11] = [
        FailureClass::Format,
        FailureClass::UnknownTool,
        FailureClass::Schema,
        FailureClass::ToolFailure,
        FailureClass::ToolTimeout,
        FailureClass::Truncated,
        FailureClass::Repetition,
        FailureClass::NotAnAnswer,
        FailureClass::MissingOutput,
        FailureClass::Ungrounded,
        FailureClass::Guessed,
    ];

    /// The class's name in traces and results.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Format => "format",
            FailureClass::UnknownTool => "unknown_tool",
            FailureClass::Schema => "schema",
            FailureClass::ToolFailure => "tool_failure",
            FailureClass::ToolTimeout => "tool_timeout",
            FailureClass::Truncated => "truncated",
            FailureClass::Repetition => "repetition",
            FailureClass::NotAnAnswer => "not_an_answer",
            FailureClass::MissingOutput => "missing_output",
            FailureClass::Ungrounded => "ungrounded",
            FailureClass::Guessed => "guessed",
        }
    }

    /// How many times in a row the class is tolerated; one more ends the run.
    pub fn cap(self) -> u32 {
        match self {
            FailureClass::Format | FailureClass::UnknownTool | FailureClass::Schema => 3,
            FailureClass::ToolFailure => 6,
            FailureClass::ToolTimeout => 3,
            // A truncated call is tried at most 4 times in all.
            FailureClass::Truncated => 3,
            FailureClass::Repetition => 3,
            // Bounded by the answer holds themselves (three and one per run).
            FailureClass::NotAnAnswer | FailureClass::MissingOutput => 3,
            // Held once per run (twice in a lookup run, see `answer_now`).
            FailureClass::Ungrounded => 2,
            FailureClass::Guessed => 3,
        }
    }
}

impl std::fmt::Display for FailureClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Consecutive failures per class; a clean step resets the model-output classes.
#[derive(Debug, Default, Clone)]
pub struct FailureCounts {
    consecutive: std::collections::HashMap<FailureClass, u32>,
}

impl FailureCounts {
    /// Records one failure; returns whether the class is now over its cap.
    pub fn record(&mut self, class: FailureClass) -> bool {
        let run = self.consecutive.entry(class).or_default();
        *run += 1;
        *run > class.cap()
    }

    /// A step whose calls all parsed and validated: output-shape failures start over.
    pub fn clean_reply(&mut self) {
        for class in [
            FailureClass::Format,
            FailureClass::UnknownTool,
            FailureClass::Schema,
            FailureClass::Truncated,
            FailureClass::NotAnAnswer,
            FailureClass::MissingOutput,
        ] {
            self.consecutive.remove(&class);
        }
    }

    /// A tool call that succeeded: tool-side failures start over.
    pub fn tool_succeeded(&mut self) {
        for class in [
            FailureClass::ToolFailure,
            FailureClass::ToolTimeout,
            FailureClass::Repetition,
            FailureClass::Guessed,
        ] {
            self.consecutive.remove(&class);
        }
    }
}

/// Phrases of the loop's own notes and results, which no file the task asks for
/// holds: a write whose text carries one copies the harness, not the workspace.
pub(crate) const NOTE_PHRASES: [&str; 11] = [
    "You already made exactly this call",
    "is one of your tools, not a shell command",
    "does not exist; did you mean",
    "before its result existed",
    "The lines most like its first line are",
    "Your last reply was empty",
    "That was not an answer:",
    "it is the file this task asks you to write",
    "Find what goes in it first (search or read",
    "Do not repeat it: use this result",
    "Repeating it will fail the same way",
];

/// Characters of an earlier result or error a repetition note shows at most.
const NOTE_EXCERPT: usize = 1200;

/// The note for an unreadable reply.
pub fn format_note(reason: &str, example: &str) -> String {
    format!("Your last reply could not be read: {reason}. Write a call exactly like this:\n{example}\nor answer in plain text if the task is done.")
}

/// The note for a call of a tool that does not exist.
pub fn unknown_tool_note(name: &str, valid: &[&str]) -> String {
    if name.trim().is_empty() {
        return "Your call had no tool name; put the tool's name in \"name\".".into();
    }
    format!(
        "There is no tool `{name}`. The tools are: {}.",
        valid.join(", ")
    )
}

/// The note for arguments that do not fit the schema.
pub fn schema_note(tool: &str, detail: &str) -> String {
    format!("Your call of `{tool}` was not run: {detail}. Fix that argument and call it again.")
}

/// The note after a reply that was cut for repeating itself.
pub const LOOP_NOTE: &str = "Your last reply kept repeating the same text and was cut. Write each call or sentence once, with short argument values, then stop.";

/// The result given instead of running a call that already succeeded, when nothing
/// has changed since: the earlier result (shortened) and what to do instead.
pub fn repeated_success_note(previous: &str) -> String {
    let shown = crate::result_text::excerpt(previous, NOTE_EXCERPT);
    format!("You already made exactly this call, and nothing has changed since. Its result was:\n{shown}\nDo not repeat it: use this result to answer the task, or make a different call.")
}

/// The result given instead of running the same failing call again.
pub fn repetition_note(previous_error: &str) -> String {
    // The whole error (shortened): its later lines may hold the next move (the lines
    // the missing output file's note shows, a command's output).
    let shown = crate::result_text::excerpt(previous_error.trim(), NOTE_EXCERPT);
    format!("You already made exactly this call and it failed: {shown}\nRepeating it will fail the same way. Change approach: inspect first (list_dir, search, read_file), or try a different tool or arguments.")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: [&str; 4] = ["read_file", "write_file", "list_dir", "shell"];

    #[test]
    fn caps_count_consecutive_failures_per_class() {
        let mut counts = FailureCounts::default();
        for _ in 0..3 {
            assert!(!counts.record(FailureClass::Format));
        }
        assert!(counts.record(FailureClass::Format));
        counts.clean_reply();
        assert!(!counts.record(FailureClass::Format));
        for _ in 0..6 {
            assert!(!counts.record(FailureClass::ToolFailure));
        }
        counts.tool_succeeded();
        assert!(!counts.record(FailureClass::ToolFailure));
    }

    #[test]
    fn a_blank_name_gets_a_reminder_not_the_catalog() {
        let note = unknown_tool_note(" ", &TOOLS);
        assert!(!note.contains("read_file"));
        assert!(unknown_tool_note("cat", &TOOLS).contains("read_file, write_file"));
    }
}
