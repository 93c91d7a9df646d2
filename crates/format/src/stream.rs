//! What the streaming parsers of every family produce: events as they become
//! certain, and the whole reply with the calls it did not return. The parser is the
//! marker engine ([`crate::family::MarkerStream`]) with each family's syntax; for
//! Hermes / Qwen: `<think>` reasoning, text, and `<tool_call>` JSON calls.
//!
//! `push` returns events as soon as they are certain. Text that could
//! still become a marker (a trailing `<tool_` in content, `</thi` in reasoning) is held
//! back until the next delta settles it, so no marker or part of one reaches content or
//! reasoning. Both fields are trimmed as wholes, like [`crate::hermes::parse_reply`]
//! trims content: leading whitespace is dropped and a trailing whitespace run is held
//! until non-whitespace follows. From the first point where a call may begin, the text
//! is held and read whole when the reply ends; calls are emitted (start, arguments,
//! end) then, so a client never receives a call that a cut-off later invalidates. The events and the
//! final [`StreamReply`] are the same however the text is split, and equal to
//! [`parse_complete`] of the whole text.
//!
//! Malformed or cut input never fails: a closed call whose body is not a valid call is
//! passed through as content, an unclosed call at the end is dropped, and both are
//! listed in [`StreamReply::rejected`] ([`StreamReply::problem`] gives the strict
//! [`ParseError`] view).

pub(crate) mod trim;

use crate::hermes::{ParseError, ParsedReply, RawCall};

/// Opens a reasoning block (only at the start of a reply).
pub const THINK_OPEN: &str = "<think>";
/// Closes a reasoning block.
pub const THINK_CLOSE: &str = "</think>";

/// One piece of a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Text for the reply's content.
    Content(String),
    /// Text for the reply's reasoning.
    Reasoning(String),
    /// A call begins.
    ToolCallStart {
        /// Which call (from 0, in order).
        index: usize,
        /// The tool's name.
        name: String,
    },
    /// A fragment of a call's arguments; a call's fragments concatenate to its
    /// arguments as JSON text.
    ToolCallArguments {
        /// Which call.
        index: usize,
        /// The fragment.
        delta: String,
    },
    /// A call is complete.
    ToolCallEnd {
        /// Which call.
        index: usize,
    },
}

/// Why a call was not returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The token limit ended the reply inside the call (or inside its opening marker).
    Truncated,
    /// The reply ended inside the call without a token limit.
    Unclosed,
    /// The call closed but its body is not a JSON object with a string `name` and an
    /// object `arguments`; its text was passed through as content.
    Malformed {
        /// What is wrong.
        reason: String,
    },
}

/// A call the parser did not return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedCall {
    /// Which call opening it was (from 1, counting returned and rejected calls).
    pub position: usize,
    /// Why.
    pub rejection: Rejection,
    /// Its text, markers included.
    pub text: String,
}

/// The whole reply, once the stream has finished.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamReply {
    /// Text outside reasoning and calls (trimmed), if any.
    pub content: Option<String>,
    /// The reasoning (trimmed), if any.
    pub reasoning: Option<String>,
    /// The valid calls, in order.
    pub calls: Vec<RawCall>,
    /// Calls that were cut, unclosed or malformed, in order.
    pub rejected: Vec<RejectedCall>,
}

impl StreamReply {
    /// The first rejected call as the strict parser's error, if any.
    pub fn problem(&self) -> Option<ParseError> {
        self.rejected.first().map(|r| match &r.rejection {
            Rejection::Truncated => ParseError::Truncated,
            Rejection::Unclosed => ParseError::Unclosed,
            Rejection::Malformed { reason } => ParseError::BadCall {
                index: r.position,
                reason: reason.clone(),
            },
        })
    }

    /// The content and calls, without reasoning and rejections.
    pub fn into_parsed(self) -> ParsedReply {
        ParsedReply {
            content: self.content,
            calls: self.calls,
        }
    }
}

/// What [`StreamParser::finish`] returns: the last events and the whole reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Events released by the end of the stream (held-back text, nothing else).
    pub events: Vec<StreamEvent>,
    /// The whole reply.
    pub reply: StreamReply,
}

/// Parses a whole Hermes reply at once: the same result as streaming it in any pieces.
pub fn parse_complete(text: &str, reasoning_open: bool, cut_off: bool) -> StreamReply {
    crate::Family::Hermes.parse_complete(text, reasoning_open, cut_off)
}
