//! An incremental parser for Hermes / Qwen replies: `<think>` reasoning, text, and
//! `<tool_call>` JSON calls, fed as the model writes them.
//!
//! [`StreamParser::push`] returns events as soon as they are certain. Text that could
//! still become a marker (a trailing `<tool_` in content, `</thi` in reasoning) is held
//! back until the next delta settles it, so no marker or part of one reaches content or
//! reasoning. Both fields are trimmed as wholes, like [`crate::hermes::parse_reply`]
//! trims content: leading whitespace is dropped and a trailing whitespace run is held
//! until non-whitespace follows. A call is emitted (start, arguments, end) when its
//! `</tool_call>` arrives and its body is a valid call: only then is it certain, and a
//! client never receives a call that a cut-off later invalidates. The events and the
//! final [`StreamReply`] are the same however the text is split, and equal to
//! [`parse_complete`] of the whole text.
//!
//! Malformed or cut input never fails: a closed call whose body is not a valid call is
//! passed through as content, an unclosed call at the end is dropped, and both are
//! listed in [`StreamReply::rejected`] ([`StreamReply::problem`] gives the strict
//! [`ParseError`] view).

mod call;
pub(crate) mod trim;

use crate::hermes::{ParseError, ParsedReply, RawCall, CALL_CLOSE, CALL_OPEN};
use call::{read_call, CallBody, Scan};
use trim::TrimSink;

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

#[derive(Debug)]
enum Mode {
    /// Nothing but whitespace yet; a `<think>` may still open reasoning.
    Start,
    Reasoning,
    Content,
    Call(CallBody),
}

/// The incremental parser: [`push`](Self::push) each delta, then
/// [`finish`](Self::finish).
#[derive(Debug)]
pub struct StreamParser {
    mode: Mode,
    pending: String,
    content: TrimSink,
    reasoning: TrimSink,
    calls: Vec<RawCall>,
    rejected: Vec<RejectedCall>,
}

impl StreamParser {
    /// A parser for one reply. `reasoning_open` says the prompt already opened a
    /// reasoning block (the generation prompt ends with `<think>`), so the reply starts
    /// in reasoning and only its `</think>` appears.
    pub fn new(reasoning_open: bool) -> Self {
        StreamParser {
            mode: if reasoning_open {
                Mode::Reasoning
            } else {
                Mode::Start
            },
            pending: String::new(),
            content: TrimSink::default(),
            reasoning: TrimSink::default(),
            calls: Vec::new(),
            rejected: Vec::new(),
        }
    }

    /// Feeds the next piece of the reply; returns the events it makes certain.
    pub fn push(&mut self, delta: &str) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.pending.push_str(delta);
        while self.step(&mut events) {}
        events
    }

    /// Ends the stream. `cut_off` says the token limit ended it: then a trailing
    /// partial marker is dropped (a partial `<tool_call>` and an open call are listed as
    /// [`Rejection::Truncated`]); without it, a trailing partial marker is ordinary
    /// text and an open call is [`Rejection::Unclosed`].
    pub fn finish(mut self, cut_off: bool) -> Finished {
        let mut events = Vec::new();
        let pending = std::mem::take(&mut self.pending);
        match std::mem::replace(&mut self.mode, Mode::Content) {
            Mode::Start if cut_off && !pending.trim_start().is_empty() => {
                // A partial `<think>`, and perhaps of `<tool_call>`.
                if partial_marker_len(&pending, CALL_OPEN) > 0 {
                    self.reject(Rejection::Truncated, pending);
                }
            }
            Mode::Start | Mode::Content => {
                if cut_off && partial_marker_len(&pending, CALL_OPEN) > 0 {
                    self.reject(Rejection::Truncated, pending);
                } else {
                    self.emit_content(&pending, &mut events);
                }
            }
            Mode::Reasoning => {
                if !(cut_off && partial_marker_len(&pending, THINK_CLOSE) > 0) {
                    self.emit_reasoning(&pending, &mut events);
                }
            }
            Mode::Call(mut body) => {
                body.push(&pending);
                let text = format!("{CALL_OPEN}{}", body.into_text());
                let why = if cut_off {
                    Rejection::Truncated
                } else {
                    Rejection::Unclosed
                };
                self.reject(why, text);
            }
        }
        Finished {
            events,
            reply: StreamReply {
                content: self.content.finish(),
                reasoning: self.reasoning.finish(),
                calls: self.calls,
                rejected: self.rejected,
            },
        }
    }

    /// Handles what `pending` allows in the current mode; false when it needs more text.
    fn step(&mut self, events: &mut Vec<StreamEvent>) -> bool {
        match &mut self.mode {
            Mode::Start => {
                let text = self.pending.trim_start();
                if let Some(rest) = text.strip_prefix(THINK_OPEN) {
                    self.pending = rest.to_string();
                    self.mode = Mode::Reasoning;
                    true
                } else if THINK_OPEN.starts_with(text) {
                    false
                } else {
                    self.mode = Mode::Content;
                    true
                }
            }
            Mode::Reasoning => {
                if let Some(at) = self.pending.find(THINK_CLOSE) {
                    let rest = self.pending.split_off(at + THINK_CLOSE.len());
                    let text = std::mem::replace(&mut self.pending, rest);
                    self.emit_reasoning(&text[..at], events);
                    self.mode = Mode::Content;
                    true
                } else {
                    let keep = partial_marker_len(&self.pending, THINK_CLOSE);
                    let held = self.pending.split_off(self.pending.len() - keep);
                    let text = std::mem::replace(&mut self.pending, held);
                    self.emit_reasoning(&text, events);
                    false
                }
            }
            Mode::Content => {
                if let Some(at) = self.pending.find(CALL_OPEN) {
                    let rest = self.pending.split_off(at + CALL_OPEN.len());
                    let text = std::mem::replace(&mut self.pending, rest);
                    self.emit_content(&text[..at], events);
                    self.mode = Mode::Call(CallBody::default());
                    true
                } else {
                    let keep = partial_marker_len(&self.pending, CALL_OPEN);
                    let held = self.pending.split_off(self.pending.len() - keep);
                    let text = std::mem::replace(&mut self.pending, held);
                    self.emit_content(&text, events);
                    false
                }
            }
            Mode::Call(body) => {
                let delta = std::mem::take(&mut self.pending);
                match body.push(&delta) {
                    Scan::Open => false,
                    Scan::Closed { body, rest } => {
                        self.pending = rest;
                        self.mode = Mode::Content;
                        self.close_call(&body, events);
                        true
                    }
                }
            }
        }
    }

    fn close_call(&mut self, body: &str, events: &mut Vec<StreamEvent>) {
        match read_call(body) {
            Ok(call) => {
                let index = self.calls.len();
                events.push(StreamEvent::ToolCallStart {
                    index,
                    name: call.name.clone(),
                });
                events.push(StreamEvent::ToolCallArguments {
                    index,
                    delta: call.arguments.to_string(),
                });
                events.push(StreamEvent::ToolCallEnd { index });
                self.calls.push(call);
            }
            Err(reason) => {
                let text = format!("{CALL_OPEN}{body}{CALL_CLOSE}");
                self.emit_content(&text, events);
                self.reject(Rejection::Malformed { reason }, text);
            }
        }
    }

    fn reject(&mut self, rejection: Rejection, text: String) {
        self.rejected.push(RejectedCall {
            position: self.calls.len() + self.rejected.len() + 1,
            rejection,
            text,
        });
    }

    fn emit_content(&mut self, text: &str, events: &mut Vec<StreamEvent>) {
        let out = self.content.push(text);
        if !out.is_empty() {
            events.push(StreamEvent::Content(out));
        }
    }

    fn emit_reasoning(&mut self, text: &str, events: &mut Vec<StreamEvent>) {
        let out = self.reasoning.push(text);
        if !out.is_empty() {
            events.push(StreamEvent::Reasoning(out));
        }
    }
}

/// Parses a whole reply at once: the same result as streaming it in any pieces.
pub fn parse_complete(text: &str, reasoning_open: bool, cut_off: bool) -> StreamReply {
    let mut parser = StreamParser::new(reasoning_open);
    parser.push(text);
    parser.finish(cut_off).reply
}

/// The length of the longest proper prefix of `marker` that ends `text`.
fn partial_marker_len(text: &str, marker: &str) -> usize {
    (1..marker.len())
        .rev()
        .find(|&k| text.ends_with(&marker[..k]))
        .unwrap_or(0)
}
