//! Graders: each looks at what a run left behind (the workspace, the answer, the
//! trace) and passes or fails with a one-line reason. A run is solved when all pass.

mod answer;
mod command;
mod files;
mod trace;

use std::path::Path;

use rein_protocol::{RunEvent as TraceEvent, RunResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::task::Task;

/// One `[[grade]]` entry of `task.toml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum GraderSpec {
    /// Every file under `expected/` exists in the workspace with the same content
    /// (line endings and trailing blank lines aside).
    FilesMatchExpected,
    /// The file contains `text`.
    FileContains {
        /// Relative to the workspace.
        path: String,
        /// The text.
        text: String,
    },
    /// The file does not contain `text` (a missing file fails).
    FileLacks {
        /// Relative to the workspace.
        path: String,
        /// The text.
        text: String,
    },
    /// The file matches the regular expression.
    FileMatches {
        /// Relative to the workspace.
        path: String,
        /// The expression.
        regex: String,
    },
    /// No file or directory exists at the path.
    FileAbsent {
        /// Relative to the workspace.
        path: String,
    },
    /// The file is byte for byte what `input/` had.
    FileUnchanged {
        /// Relative to the workspace.
        path: String,
    },
    /// The final answer contains `text` (case-insensitive).
    AnswerContains {
        /// The text.
        text: String,
    },
    /// The final answer does not contain `text` (case-insensitive).
    AnswerLacks {
        /// The text.
        text: String,
    },
    /// The final answer matches the regular expression.
    AnswerMatches {
        /// The expression.
        regex: String,
    },
    /// The final answer holds a JSON value equal to `value`.
    AnswerJsonEquals {
        /// The value.
        value: Value,
    },
    /// A shell command run in the workspace exits with `exit_code`.
    Command {
        /// The command (`sh -c`).
        run: String,
        /// The exit code wanted.
        #[serde(default)]
        exit_code: i32,
        /// Seconds before it counts as failed.
        #[serde(default = "default_command_timeout")]
        timeout_s: u64,
    },
    /// No tool call failed.
    NoToolErrors,
    /// A tool ran at least `min` times, with arguments containing `arguments`.
    ToolCalled {
        /// The tool.
        name: String,
        /// A subset the arguments must contain (numbers compare by value).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
        /// How many matching calls at least.
        #[serde(default = "one")]
        min: u32,
        /// How many calls of the tool at most, matching or not (none: no limit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u32>,
    },
    /// A tool never ran (`*`: no tool ran at all).
    ToolNotCalled {
        /// The tool, or `*`.
        name: String,
    },
    /// One reply held at least `min` calls.
    ParallelCalls {
        /// Calls in one reply.
        min: u32,
    },
    /// The run took at most `n` model turns.
    MaxTurns {
        /// The most turns.
        n: u32,
    },
}

fn default_command_timeout() -> u64 {
    30
}

fn one() -> u32 {
    1
}

/// What a grader may look at.
pub struct GradeContext<'a> {
    /// The task.
    pub task: &'a Task,
    /// The run's workspace.
    pub workspace: &'a Path,
    /// The run's result.
    pub result: &'a RunResult,
    /// The run's trace.
    pub events: &'a [TraceEvent],
}

/// One grader's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grade {
    /// The grader's kind.
    pub grader: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why, in one line.
    pub detail: String,
}

impl GraderSpec {
    /// The grader's kind as written in `task.toml`.
    pub fn kind(&self) -> &'static str {
        match self {
            GraderSpec::FilesMatchExpected => "files_match_expected",
            GraderSpec::FileContains { .. } => "file_contains",
            GraderSpec::FileLacks { .. } => "file_lacks",
            GraderSpec::FileMatches { .. } => "file_matches",
            GraderSpec::FileAbsent { .. } => "file_absent",
            GraderSpec::FileUnchanged { .. } => "file_unchanged",
            GraderSpec::AnswerContains { .. } => "answer_contains",
            GraderSpec::AnswerLacks { .. } => "answer_lacks",
            GraderSpec::AnswerMatches { .. } => "answer_matches",
            GraderSpec::AnswerJsonEquals { .. } => "answer_json_equals",
            GraderSpec::Command { .. } => "command",
            GraderSpec::NoToolErrors => "no_tool_errors",
            GraderSpec::ToolCalled { .. } => "tool_called",
            GraderSpec::ToolNotCalled { .. } => "tool_not_called",
            GraderSpec::ParallelCalls { .. } => "parallel_calls",
            GraderSpec::MaxTurns { .. } => "max_turns",
        }
    }

    /// Checks the grader against its task before any run.
    pub fn check(&self, task: &Task) -> Result<(), String> {
        match self {
            GraderSpec::FilesMatchExpected if !task.expected_dir().is_dir() => {
                Err("files_match_expected needs an expected/ directory".into())
            }
            GraderSpec::FileMatches { regex, .. } | GraderSpec::AnswerMatches { regex } => {
                regex::Regex::new(regex)
                    .map(|_| ())
                    .map_err(|e| format!("{}: bad regex: {e}", self.kind()))
            }
            GraderSpec::FileUnchanged { path } if !task.input_dir().join(path).is_file() => {
                Err(format!("file_unchanged: input/{path} does not exist"))
            }
            _ => Ok(()),
        }
    }

    /// Grades one run.
    pub fn grade(&self, context: &GradeContext<'_>) -> Grade {
        let answer = context.result.answer.as_deref().unwrap_or("");
        let verdict = match self {
            GraderSpec::FilesMatchExpected => {
                files::match_expected(&context.task.expected_dir(), context.workspace)
            }
            GraderSpec::FileContains { path, text } => {
                files::contains(context.workspace, path, text, true)
            }
            GraderSpec::FileLacks { path, text } => {
                files::contains(context.workspace, path, text, false)
            }
            GraderSpec::FileMatches { path, regex } => {
                files::matches(context.workspace, path, regex)
            }
            GraderSpec::FileAbsent { path } => files::absent(context.workspace, path),
            GraderSpec::FileUnchanged { path } => {
                files::unchanged(&context.task.input_dir(), context.workspace, path)
            }
            GraderSpec::AnswerContains { text } => answer::contains(answer, text, true),
            GraderSpec::AnswerLacks { text } => answer::contains(answer, text, false),
            GraderSpec::AnswerMatches { regex } => answer::matches(answer, regex),
            GraderSpec::AnswerJsonEquals { value } => answer::json_equals(answer, value),
            GraderSpec::Command {
                run,
                exit_code,
                timeout_s,
            } => command::exit_code(context.workspace, run, *exit_code, *timeout_s),
            GraderSpec::NoToolErrors => trace::no_tool_errors(context.events),
            GraderSpec::ToolCalled {
                name,
                arguments,
                min,
                max,
            } => trace::tool_called(context.events, name, arguments.as_ref(), *min, *max),
            GraderSpec::ToolNotCalled { name } => trace::tool_not_called(context.events, name),
            GraderSpec::ParallelCalls { min } => trace::parallel_calls(context.events, *min),
            GraderSpec::MaxTurns { n } => trace::max_turns(context.result.turns, *n),
        };
        let (passed, detail) = match verdict {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        Grade {
            grader: self.kind().to_string(),
            passed,
            detail,
        }
    }
}

/// Whether `actual` contains `expected`: objects by key (recursively), arrays
/// element by element with the same length, numbers by value, the rest equal.
pub fn json_subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(want), Value::Object(have)) => want
            .iter()
            .all(|(key, value)| have.get(key).is_some_and(|h| json_subset(value, h))),
        (Value::Array(want), Value::Array(have)) => {
            want.len() == have.len() && want.iter().zip(have).all(|(w, h)| json_subset(w, h))
        }
        (Value::Number(want), Value::Number(have)) => want.as_f64() == have.as_f64(),
        (want, have) => want == have,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subsets_compare_numbers_by_value_and_arrays_whole() {
        assert!(json_subset(&json!({"a": 1}), &json!({"a": 1.0, "b": 2})));
        assert!(!json_subset(&json!({"a": 1}), &json!({"a": "1"})));
        assert!(!json_subset(&json!({"a": [1]}), &json!({"a": [1, 2]})));
        assert!(json_subset(
            &json!({"a": [{"x": 1}]}),
            &json!({"a": [{"x": 1, "y": 2}]})
        ));
        assert!(!json_subset(&json!({"c": null}), &json!({})));
    }
}
