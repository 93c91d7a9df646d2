//! The one reply reader: generated text becomes content, reasoning and checked calls,
//! as it streams or all at once (the same result either way). Calls are read in the
//! family's own syntax; with repairs on, a reply that is wholly bare JSON calls is
//! read as those calls, tool names are repaired when the intent is beyond doubt, and
//! a call-shaped object inside prose is reported (never run). Every call's arguments
//! are coerced narrowly and checked against the tool's schema. The agent, `rein serve`
//! and `rein chat` all read replies here.

mod names;
mod wrapper;

use rein_protocol::ToolChoice;
use serde_json::Value;

use crate::family::hermes::{ParseError, RawCall};
use crate::stream::StreamEvent;
use crate::{Family, FamilyStream, ModelFormat, ToolSet};

pub use names::{repair_tool_name, repaired_name};
pub use wrapper::{
    bare_calls, calls_then_text, json_objects, loose_calls, may_open_wrapper, wrapper_start,
};

/// How a reply is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadMode {
    /// Read calls at all (else the reply is text, as generated).
    pub calls: bool,
    /// Read calls written outside the call markers and repair tool names.
    pub repair: bool,
    /// A call read from a wrapper counts only when every such call validates (else
    /// the reply is content): what a client that runs the calls itself needs.
    pub wrapped_must_validate: bool,
}

impl ReadMode {
    /// The reply is text.
    pub const TEXT: ReadMode = ReadMode {
        calls: false,
        repair: false,
        wrapped_must_validate: false,
    };
    /// Calls in the family's syntax only.
    pub const STRICT: ReadMode = ReadMode {
        calls: true,
        repair: false,
        wrapped_must_validate: false,
    };
    /// Calls with every repair, problems reported for the caller to act on (the
    /// agent's `full` profile).
    pub const REPAIR: ReadMode = ReadMode {
        calls: true,
        repair: true,
        wrapped_must_validate: false,
    };
    /// Calls with every repair, wrapped ones only when they validate (`rein serve`,
    /// `rein chat`: the client gets calls it can run, or text).
    pub const CLIENT: ReadMode = ReadMode {
        calls: true,
        repair: true,
        wrapped_must_validate: true,
    };
}

/// Whether a call fits its tool.
#[derive(Debug, Clone, PartialEq)]
pub enum CallCheck {
    /// The arguments validate (after narrow coercion).
    Valid,
    /// No offered tool has this name (nor an obvious variant of it).
    UnknownTool,
    /// The arguments do not fit the schema: why.
    Invalid(String),
}

/// A call read from the reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadCall {
    /// The tool (repaired when the written name was an obvious variant).
    pub name: String,
    /// The arguments with the tool's own property names: coerced when they validate,
    /// as written otherwise.
    pub arguments: Value,
    /// The name as written.
    pub written_name: String,
    /// The arguments as written.
    pub written_arguments: Value,
    /// Whether it fits its tool.
    pub check: CallCheck,
    /// It was written outside the family's call markers.
    pub wrapped: bool,
}

/// What keeps a reply from being read as it is.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyProblem {
    /// A call was cut off, left open or malformed.
    Parse(ParseError),
    /// The reply is wholly bare JSON calls, and this name is no tool's.
    InventedTool(String),
    /// Call-shaped objects in other text, naming tools: the calls of the first tool
    /// named (distinct, at most [`MISFORMATTED_SHOWN`]) written in the family's syntax
    /// (the reply was read as text).
    Misformatted(Vec<String>),
    /// The turn required a call and the reply has none.
    CallMissing,
}

impl std::fmt::Display for ReplyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplyProblem::Parse(error) => write!(f, "{error}"),
            ReplyProblem::InventedTool(name) => {
                write!(f, "the reply is a call to `{name}`, which does not exist")
            }
            ReplyProblem::Misformatted(_) => {
                f.write_str("the reply holds a tool call that is not written in the call format")
            }
            ReplyProblem::CallMissing => {
                f.write_str("a tool call was required and the reply had none")
            }
        }
    }
}

/// A whole reply, read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// Text outside reasoning and calls (trimmed when calls were read), if any.
    pub content: Option<String>,
    /// The reasoning, if any.
    pub reasoning: Option<String>,
    /// The calls, in order.
    pub calls: Vec<ReadCall>,
    /// What kept it from being read as it is (the first one matters most).
    pub problems: Vec<ReplyProblem>,
    /// How the calls' format was repaired, when it was.
    pub format_repair: Option<String>,
}

impl Reply {
    /// A text-only reply.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        Reply {
            content: (!text.is_empty()).then_some(text),
            ..Reply::default()
        }
    }
}

/// One piece of a reply as it streams.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyEvent {
    /// More content.
    Content(String),
    /// More reasoning.
    Reasoning(String),
    /// A whole call.
    Call(ReadCall),
}

/// What [`ReplyReader::finish`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOutcome {
    /// The last events.
    pub events: Vec<ReplyEvent>,
    /// The whole reply.
    pub reply: Reply,
}

/// Content not yet sent: from a line that opens like a wrapper on, it is held until
/// the reply ends (then it is calls, or released as content).
#[derive(Debug, Default)]
struct Hold {
    /// All content so far.
    seen: String,
    /// How much of it was sent.
    sent: usize,
    /// Where a wrapper opens; everything from here is held to the end.
    from: Option<usize>,
}

/// Reads one reply as it is generated.
#[derive(Debug)]
pub struct ReplyReader<'a> {
    family: Family,
    tools: Option<&'a ToolSet>,
    mode: ReadMode,
    required: bool,
    /// `None`: the reply is text.
    stream: Option<FamilyStream>,
    /// All raw text, for the cut-off rule.
    raw: String,
    open_call: Option<(String, String)>,
    calls: Vec<ReadCall>,
    hold: Hold,
    /// Problems found outside the text (a remote call whose arguments are not JSON).
    outside: Vec<ReplyProblem>,
    /// Calls came structured (not in the text).
    structured: bool,
    /// The reply was cut for repeating itself (see [`ReplyReader::finish_looped`]).
    looped: bool,
}

impl ModelFormat {
    /// A reader for one reply that may call `tools` under `choice`, read in `mode`.
    pub fn reader<'a>(
        &self,
        tools: Option<&'a ToolSet>,
        choice: &ToolChoice,
        mode: ReadMode,
    ) -> ReplyReader<'a> {
        ReplyReader::new(self.family, tools, choice, mode)
    }

    /// Reads a whole reply (`cut_off`: the token limit ended it).
    pub fn read(
        &self,
        text: &str,
        cut_off: bool,
        tools: Option<&ToolSet>,
        choice: &ToolChoice,
        mode: ReadMode,
    ) -> Reply {
        let mut reader = self.reader(tools, choice, mode);
        reader.push(text);
        reader.finish(cut_off).reply
    }
}

impl<'a> ReplyReader<'a> {
    /// A reader for `family`'s syntax (see [`ModelFormat::reader`]).
    pub fn new(
        family: Family,
        tools: Option<&'a ToolSet>,
        choice: &ToolChoice,
        mode: ReadMode,
    ) -> Self {
        let reads_calls =
            mode.calls && *choice != ToolChoice::None && tools.is_some_and(|t| !t.is_empty());
        Self {
            family,
            tools,
            mode,
            required: choice.requires_call(),
            stream: reads_calls.then(|| family.stream(false)),
            raw: String::new(),
            open_call: None,
            calls: Vec::new(),
            hold: Hold::default(),
            outside: Vec::new(),
            structured: false,
            looped: false,
        }
    }

    /// A call that came structured, not as text (a remote server's `tool_calls`):
    /// checked like one read from the text.
    pub fn push_call(&mut self, call: RawCall) -> ReplyEvent {
        let call = self.check(call, false);
        self.structured = true;
        self.calls.push(call.clone());
        ReplyEvent::Call(call)
    }

    /// A structured call that could not be read (its arguments are not JSON).
    pub fn push_malformed(&mut self, reason: String) {
        self.structured = true;
        let index = self.calls.len() + self.outside.len() + 1;
        self.outside
            .push(ReplyProblem::Parse(ParseError::BadCall { index, reason }));
    }

    /// Feeds generated text; returns the events it makes certain.
    pub fn push(&mut self, text: &str) -> Vec<ReplyEvent> {
        self.raw.push_str(text);
        match self.stream.as_mut() {
            None if text.is_empty() => Vec::new(),
            None => vec![ReplyEvent::Content(text.to_string())],
            Some(stream) => {
                let events = stream.push(text);
                self.take(events)
            }
        }
    }

    /// Ends a reply that was cut for repeating itself: read as a cut reply, except
    /// that calls in a wrapper are read from its lines written in full (the partial
    /// last line left out, a fence it left open closed): a small model that writes one
    /// call over and over has still written that call.
    pub fn finish_looped(mut self) -> ReadOutcome {
        self.looped = true;
        self.finish(true)
    }

    /// Ends the reply (`cut_off`: the token limit ended it).
    pub fn finish(mut self, cut_off: bool) -> ReadOutcome {
        let Some(stream) = self.stream.take() else {
            let mut reply = Reply::text(self.raw);
            reply.calls = self.calls;
            reply.problems = self.outside;
            return ReadOutcome {
                events: Vec::new(),
                reply,
            };
        };
        let finished = stream.finish(cut_off);
        let mut events = self.take(finished.events);
        let parsed = finished.reply;
        let mut problems = std::mem::take(&mut self.outside);
        let has_calls = !self.calls.is_empty();
        if !self.structured
            && self
                .family
                .cut_inside_calls(&self.raw, cut_off, self.required, has_calls)
        {
            problems.push(ReplyProblem::Parse(ParseError::Truncated));
        } else if let Some(problem) = parsed.problem() {
            problems.push(ReplyProblem::Parse(problem));
        }
        let hold = std::mem::take(&mut self.hold);
        let held = &hold.seen[hold.sent..];
        let mut format_repair = None;
        let mut content = parsed.content;
        let mut released = true;
        if self.calls.is_empty() && problems.is_empty() && self.mode.repair {
            let text = content.clone().unwrap_or_default();
            // A reply cut for looping, or by the token limit, has the calls written
            // in full: its unfinished last line is left out (a small model's spray
            // of bare calls, cut in the sixth, has written five).
            let complete = match self.looped || cut_off {
                true => complete_lines(held),
                false => held.to_string(),
            };
            match calls_then_text(&complete) {
                Some((raw, after)) => match self.wrapped(raw) {
                    Ok(calls) => {
                        format_repair = Some(format!(
                            "{} call(s) written in a wrapper instead of the call markers",
                            calls.len()
                        ));
                        for call in &calls {
                            events.push(ReplyEvent::Call(call.clone()));
                        }
                        self.calls = calls;
                        // The prose around the calls is the reply's content; what
                        // follows them was held, so it is sent now.
                        let before = hold.seen[..hold.sent].trim();
                        if !after.is_empty() {
                            let gap = if before.is_empty() { "" } else { "\n\n" };
                            events.push(ReplyEvent::Content(format!("{gap}{after}")));
                        }
                        let prose = [before, after]
                            .into_iter()
                            .filter(|part| !part.is_empty())
                            .collect::<Vec<_>>()
                            .join("\n\n");
                        content = (!prose.is_empty()).then_some(prose);
                        released = false;
                    }
                    Err(problem) => problems.extend(problem),
                },
                None => {
                    if let Some(example) = self.misformatted(&text) {
                        problems.push(ReplyProblem::Misformatted(example));
                    }
                }
            }
        }
        if released && !held.is_empty() {
            events.push(ReplyEvent::Content(held.to_string()));
        }
        if self.required && self.calls.is_empty() && problems.is_empty() {
            problems.push(ReplyProblem::CallMissing);
        }
        ReadOutcome {
            events,
            reply: Reply {
                content,
                reasoning: parsed.reasoning,
                calls: self.calls,
                problems,
                format_repair,
            },
        }
    }

    /// Turns the family stream's events into reply events.
    fn take(&mut self, events: Vec<StreamEvent>) -> Vec<ReplyEvent> {
        let mut out = Vec::new();
        for event in events {
            match event {
                StreamEvent::Content(text) => self.content_event(text, &mut out),
                StreamEvent::Reasoning(text) => out.push(ReplyEvent::Reasoning(text)),
                StreamEvent::ToolCallStart { name, .. } => {
                    self.open_call = Some((name, String::new()));
                }
                StreamEvent::ToolCallArguments { delta, .. } => {
                    if let Some((_, arguments)) = self.open_call.as_mut() {
                        arguments.push_str(&delta);
                    }
                }
                StreamEvent::ToolCallEnd { .. } => {
                    if let Some((name, arguments)) = self.open_call.take() {
                        let arguments = serde_json::from_str(&arguments)
                            .unwrap_or_else(|_| Value::Object(Default::default()));
                        let call = self.check(RawCall { name, arguments }, false);
                        out.push(ReplyEvent::Call(call.clone()));
                        self.calls.push(call);
                    }
                }
            }
        }
        out
    }

    /// Content passes through unless a line of it may open a wrapper: from there it is
    /// held (to the end once the line does open one).
    fn content_event(&mut self, text: String, out: &mut Vec<ReplyEvent>) {
        let hold = &mut self.hold;
        hold.seen.push_str(&text);
        if !self.mode.repair {
            out.push(ReplyEvent::Content(text));
            hold.sent = hold.seen.len();
            return;
        }
        if hold.from.is_some() {
            return;
        }
        // Only a line's start can open a wrapper: the first one not yet sent.
        let line_start = if hold.sent == 0 || hold.seen[..hold.sent].ends_with('\n') {
            Some(hold.sent)
        } else {
            hold.seen[hold.sent..].find('\n').map(|i| hold.sent + i + 1)
        };
        let until = match line_start.and_then(|start| wrapper_start(&hold.seen, start)) {
            None => hold.seen.len(),
            Some(at) => {
                let line = hold.seen[at..].trim_start_matches([' ', '\t']);
                if may_open_wrapper(line) {
                    hold.from = Some(at);
                }
                at
            }
        };
        // Whitespace before held text waits with it, so the sent text is trimmed.
        let segment = &hold.seen[hold.sent..until];
        let ready = segment.trim_end().len();
        if ready > 0 {
            out.push(ReplyEvent::Content(segment[..ready].to_string()));
            hold.sent += ready;
        }
    }

    /// A call with its name repaired (when repairs are on and the intent is beyond
    /// doubt) and its arguments coerced and checked.
    fn check(&self, call: RawCall, wrapped: bool) -> ReadCall {
        let RawCall {
            name: written_name,
            arguments: written_arguments,
        } = call;
        let tool = self.tools.and_then(|tools| {
            let name = match tools.get(&written_name) {
                Some(_) => Some(written_name.clone()),
                None if self.mode.repair => repaired_name(tools, &written_name, &written_arguments),
                None => None,
            };
            name.and_then(|n| tools.get(&n))
        });
        let Some(tool) = tool else {
            return ReadCall {
                name: written_name.clone(),
                arguments: written_arguments.clone(),
                written_name,
                written_arguments,
                check: CallCheck::UnknownTool,
                wrapped,
            };
        };
        let (arguments, check) = match tool.validator.check_value(written_arguments.clone()) {
            Ok(arguments) => (arguments, CallCheck::Valid),
            Err(error) => (
                tool.sanitized.schema.restore_names(&written_arguments),
                CallCheck::Invalid(error.to_string()),
            ),
        };
        ReadCall {
            name: tool.name.clone(),
            arguments,
            written_name,
            written_arguments,
            check,
            wrapped,
        }
    }

    /// Bare calls as read calls: all of them when every name is a tool's (or repaired
    /// beyond doubt), else the first invented name; in the client mode, nothing
    /// (the reply stays text) when one does not validate.
    fn wrapped(&self, raw: Vec<RawCall>) -> Result<Vec<ReadCall>, Option<ReplyProblem>> {
        let calls: Vec<ReadCall> = raw.into_iter().map(|c| self.check(c, true)).collect();
        if let Some(invented) = calls.iter().find(|c| c.check == CallCheck::UnknownTool) {
            return Err(Some(ReplyProblem::InventedTool(
                invented.written_name.clone(),
            )));
        }
        if self.mode.wrapped_must_validate && calls.iter().any(|c| c.check != CallCheck::Valid) {
            return Err(None);
        }
        Ok(calls)
    }

    /// A call-shaped object in `text` naming a tool (or an obvious variant of one),
    /// written the right way.
    fn misformatted(&self, text: &str) -> Option<Vec<String>> {
        let tools = self.tools?;
        let mut first: Option<String> = None;
        let mut shown: Vec<String> = Vec::new();
        for c in loose_calls(text) {
            let name = match tools.get(&c.name) {
                Some(_) => Some(c.name.clone()),
                None => repaired_name(tools, &c.name, &c.arguments),
            };
            let Some(name) = name else { continue };
            // The first tool's calls: later tools' calls are later steps, which
            // most often need the first one's results.
            if first.get_or_insert_with(|| name.clone()) != &name {
                continue;
            }
            let call = self.family.call_text(&name, &c.arguments);
            if shown.len() < MISFORMATTED_SHOWN && !shown.contains(&call) {
                shown.push(call);
            }
        }
        (!shown.is_empty()).then_some(shown)
    }
}

/// Calls of a misformatted reply shown at most, in the family's syntax.
pub const MISFORMATTED_SHOWN: usize = 4;

/// The lines of `text` written in full (what follows its last line break left out),
/// with a closing fence when an opened one was left open.
fn complete_lines(text: &str) -> String {
    let whole = text.rfind('\n').map_or("", |at| &text[..at]);
    let mut out = whole.trim_end().to_string();
    if out.matches("```").count() % 2 == 1 {
        out.push_str("\n```");
    }
    out
}

#[cfg(test)]
mod tests;
