//! `structured`: every reply forced to be a call by the grammar; a `finish` call
//! carries the answer. Calls are read strictly in the family's syntax and checked
//! against the schemas; a reply that fails is retried blindly, without a note.

use rein_engine::{Completion, ReadMode};
use rein_format::{hermes::ParseError, ReplyProblem, ToolFormat};
use rein_protocol::ToolChoice;

use super::{ReadContext, RetryMode, Shape, Step, Strategy};
use crate::recovery::FailureClass;

/// The `structured` profile.
pub(crate) struct Structured;

impl Strategy for Structured {
    fn offers_finish(&self) -> bool {
        true
    }

    fn shape(&self, tool_format: ToolFormat, _forced: Option<&ToolChoice>) -> Shape {
        Shape {
            tools: true,
            tool_format,
            choice: ToolChoice::Required,
            constrained: true,
            read: ReadMode::STRICT,
            stop: Vec::new(),
        }
    }

    fn read(&self, completion: &Completion, _context: ReadContext<'_>) -> Step {
        let reply = &completion.reply;
        match reply.problems.first() {
            Some(ReplyProblem::Parse(ParseError::Truncated)) => Step::retry(
                FailureClass::Truncated,
                "the reply hit the token limit inside a call",
                None,
                RetryMode::Same,
            ),
            Some(problem) => Step::retry(
                FailureClass::Format,
                problem.to_string(),
                None,
                RetryMode::Same,
            ),
            None if reply.calls.is_empty() => Step::retry(
                FailureClass::Format,
                ReplyProblem::CallMissing.to_string(),
                None,
                RetryMode::Same,
            ),
            None => Step::calls(reply),
        }
    }
}
