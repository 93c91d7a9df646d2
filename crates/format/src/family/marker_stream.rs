//! The streaming engine shared by families whose calls start at a marker: an optional
//! reasoning block at the reply's start, then content streamed until the first point
//! where a call may begin; from there the text is held and read whole when the stream
//! ends. The whole-text parse and every split of the same text give the same reply.

use std::fmt;

use crate::hermes::RawCall;
use crate::stream::trim::TrimSink;
use crate::stream::{Finished, RejectedCall, StreamEvent, StreamReply};

/// Where the first call may begin in the text after reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// No call has begun: text up to this byte offset is certainly content.
    Content(usize),
    /// A call begins at this byte offset.
    CallAt(usize),
}

/// The text after reasoning, read whole.
#[derive(Debug, Default)]
pub(crate) struct Body {
    /// Content, untrimmed: it starts with the text before the first call.
    pub content: String,
    /// The valid calls, in order.
    pub calls: Vec<RawCall>,
    /// Calls that were cut, unclosed or malformed.
    pub rejected: Vec<RejectedCall>,
}

/// What a family supplies to the engine.
pub(crate) trait CallSyntax: Sync + fmt::Debug {
    /// Reasoning blocks a reply may start with: `(open, close)`.
    fn reasoning(&self) -> &'static [(&'static str, &'static str)];
    /// Where the first call may begin in `body`; the answer for a longer text never
    /// moves backwards.
    fn scan(&self, body: &str) -> Scan;
    /// Reads the whole text after reasoning (`cut_off`: the token limit ended it).
    fn parse_body(&self, body: &str, cut_off: bool) -> Body;
}

#[derive(Debug)]
enum Mode {
    Start,
    Reasoning(&'static str),
    Body,
}

/// The incremental parser of a marker family.
pub struct MarkerStream {
    syntax: &'static dyn CallSyntax,
    mode: Mode,
    pending: String,
    body: String,
    emitted: usize,
    in_call: bool,
    content: TrimSink,
    reasoning: TrimSink,
}

impl fmt::Debug for MarkerStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MarkerStream")
            .field("syntax", &self.syntax)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl MarkerStream {
    /// A parser for one reply; `reasoning_open` starts it inside the family's first
    /// reasoning block.
    pub(crate) fn new(syntax: &'static dyn CallSyntax, reasoning_open: bool) -> Self {
        let mode = match syntax.reasoning().first() {
            Some((_, close)) if reasoning_open => Mode::Reasoning(close),
            _ => Mode::Start,
        };
        MarkerStream {
            syntax,
            mode,
            pending: String::new(),
            body: String::new(),
            emitted: 0,
            in_call: false,
            content: TrimSink::default(),
            reasoning: TrimSink::default(),
        }
    }

    /// Feeds the next piece of the reply; returns the events it makes certain.
    pub fn push(&mut self, delta: &str) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.pending.push_str(delta);
        while self.step(&mut events) {}
        events
    }

    /// Ends the stream (`cut_off`: the token limit ended it); the held text is read.
    pub fn finish(mut self, cut_off: bool) -> Finished {
        let mut events = Vec::new();
        let pending = std::mem::take(&mut self.pending);
        match self.mode {
            Mode::Start => {
                let partial_open = self
                    .syntax
                    .reasoning()
                    .iter()
                    .any(|(open, _)| open.starts_with(pending.trim_start()));
                if !(cut_off && partial_open) {
                    self.body.push_str(&pending);
                }
            }
            Mode::Reasoning(close) => {
                if !(cut_off && partial_marker_len(&pending, close) > 0) {
                    emit(
                        &mut self.reasoning,
                        &pending,
                        &mut events,
                        StreamEvent::Reasoning,
                    );
                }
            }
            Mode::Body => {}
        }
        let body = self.syntax.parse_body(&self.body, cut_off);
        let rest = body.content.get(self.emitted..).unwrap_or_default();
        emit(&mut self.content, rest, &mut events, StreamEvent::Content);
        for (index, call) in body.calls.iter().enumerate() {
            events.push(StreamEvent::ToolCallStart {
                index,
                name: call.name.clone(),
            });
            events.push(StreamEvent::ToolCallArguments {
                index,
                delta: call.arguments.to_string(),
            });
            events.push(StreamEvent::ToolCallEnd { index });
        }
        Finished {
            events,
            reply: StreamReply {
                content: self.content.finish(),
                reasoning: self.reasoning.finish(),
                calls: body.calls,
                rejected: body.rejected,
            },
        }
    }

    fn step(&mut self, events: &mut Vec<StreamEvent>) -> bool {
        match self.mode {
            Mode::Start => {
                let text = self.pending.trim_start();
                for (open, close) in self.syntax.reasoning() {
                    if let Some(rest) = text.strip_prefix(open) {
                        self.pending = rest.to_string();
                        self.mode = Mode::Reasoning(close);
                        return true;
                    }
                }
                if self
                    .syntax
                    .reasoning()
                    .iter()
                    .any(|(open, _)| open.starts_with(text))
                {
                    return false;
                }
                self.mode = Mode::Body;
                true
            }
            Mode::Reasoning(close) => {
                if let Some(at) = self.pending.find(close) {
                    let rest = self.pending.split_off(at + close.len());
                    let text = std::mem::replace(&mut self.pending, rest);
                    emit(
                        &mut self.reasoning,
                        &text[..at],
                        events,
                        StreamEvent::Reasoning,
                    );
                    self.mode = Mode::Body;
                    true
                } else {
                    let keep = partial_marker_len(&self.pending, close);
                    let held = self.pending.split_off(self.pending.len() - keep);
                    let text = std::mem::replace(&mut self.pending, held);
                    emit(&mut self.reasoning, &text, events, StreamEvent::Reasoning);
                    false
                }
            }
            Mode::Body => {
                self.body.push_str(&std::mem::take(&mut self.pending));
                if !self.in_call {
                    let end = match self.syntax.scan(&self.body) {
                        Scan::Content(end) => end,
                        Scan::CallAt(at) => {
                            self.in_call = true;
                            at
                        }
                    };
                    if end > self.emitted {
                        let text = self.body[self.emitted..end].to_string();
                        emit(&mut self.content, &text, events, StreamEvent::Content);
                        self.emitted = end;
                    }
                }
                false
            }
        }
    }
}

fn emit(
    sink: &mut TrimSink,
    text: &str,
    events: &mut Vec<StreamEvent>,
    event: fn(String) -> StreamEvent,
) {
    let out = sink.push(text);
    if !out.is_empty() {
        events.push(event(out));
    }
}

/// The length of the longest proper prefix of `marker` that ends `text`.
pub(crate) fn partial_marker_len(text: &str, marker: &str) -> usize {
    (1..marker.len())
        .rev()
        .find(|&k| text.ends_with(&marker[..k]))
        .unwrap_or(0)
}

/// Where content certainly ends in `text` when calls start at `marker`.
pub(crate) fn scan_for(text: &str, marker: &str) -> Scan {
    match text.find(marker) {
        Some(at) => Scan::CallAt(at),
        None => Scan::Content(text.len() - partial_marker_len(text, marker)),
    }
}
