//! Tool-call formats ("families") in an ordered registry: each family detects its
//! models from the chat template and architecture, builds the call grammar, parses
//! replies (strictly and as a stream), and teaches its syntax to templates that cannot
//! render tools (emulated calling). Native tool prompts stay with each model's own
//! chat template.

mod gemma;
mod gemma_grammar;
pub(crate) mod grammar;
pub mod hermes;
mod hermes_body;
mod json_call;
mod llama3;
mod marker_stream;
mod mistral;
mod object_notation;

use std::fmt;
use std::str::FromStr;

use rein_protocol::{Grammar, Message};
use serde_json::Value;

use self::hermes::{ParseError, ParsedReply};
use crate::stream::StreamReply;
use crate::{ToolChoice, ToolSet};

use marker_stream::CallSyntax;
pub use marker_stream::MarkerStream;

/// A tool-call format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Family {
    /// Hermes / Qwen2.5 / Qwen3: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.
    #[default]
    Hermes,
    /// Llama 3.1–3.3: `{"name": ..., "parameters": {...}}`, optionally after
    /// `<|python_tag|>`.
    Llama3,
    /// Mistral: `[TOOL_CALLS]name[ARGS]{...}` (v11+) or `[TOOL_CALLS][{...}]` (v3).
    Mistral,
    /// Gemma 4: `<|tool_call>call:NAME{key:value}<tool_call|>` object notation.
    Gemma,
    /// Templates without tool support: rein's own `<tool_call>` JSON, taught in the
    /// system prompt.
    Generic,
}

/// The registry, in detection order: the first family whose rule matches wins.
/// Families with distinctive markers come first; `hermes` matches any other template
/// that renders tools; `generic` matches everything.
pub const REGISTRY: [Family; 5] = [
    Family::Gemma,
    Family::Mistral,
    Family::Llama3,
    Family::Hermes,
    Family::Generic,
];

/// A name that is not a family.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool-call family `{0}` (hermes, llama3, mistral, gemma or generic)")]
pub struct UnknownFamily(String);

impl Family {
    /// The first family in [`REGISTRY`] that claims a model with chat template
    /// `template` (its source text) and GGUF architecture `architecture`.
    pub fn detect(template: &str, architecture: &str) -> Family {
        REGISTRY
            .into_iter()
            .find(|f| f.matches(template, architecture))
            .unwrap_or(Family::Generic)
    }

    /// This family's detection rule.
    pub fn matches(self, template: &str, architecture: &str) -> bool {
        match self {
            Family::Hermes => hermes::detects(template),
            Family::Llama3 => llama3::detects(template),
            Family::Mistral => mistral::detects(template),
            Family::Gemma => gemma::detects(template, architecture),
            Family::Generic => true,
        }
    }

    /// The family's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Llama3 => "llama3",
            Family::Mistral => "mistral",
            Family::Gemma => "gemma",
            Family::Generic => "generic",
        }
    }

    /// The text that opens a call in this family's syntax.
    pub fn call_opener(self) -> &'static str {
        match self {
            Family::Hermes | Family::Generic => hermes::CALL_OPEN,
            Family::Llama3 => llama3::PYTHON_TAG,
            Family::Mistral => mistral::TOOL_CALLS,
            Family::Gemma => gemma::CALL_OPEN,
        }
    }

    /// Whether a template of this family can render tools itself.
    pub fn has_native_tools(self) -> bool {
        self != Family::Generic
    }

    /// The grammar for `choice` over `tools`: only offered tool names, arguments per
    /// each tool's canonical schema; `auto` is lazy (it starts at the family's call
    /// marker). `None` when the turn is unconstrained.
    pub fn call_grammar(
        self,
        tools: &ToolSet,
        choice: &ToolChoice,
        parallel: bool,
    ) -> Option<Grammar> {
        self.call_grammar_with(tools, choice, parallel, AutoGrammar::LazyWithWrappers)
    }

    /// [`Self::call_grammar`], with the way an `auto` turn is constrained chosen.
    pub fn call_grammar_with(
        self,
        tools: &ToolSet,
        choice: &ToolChoice,
        parallel: bool,
        auto: AutoGrammar,
    ) -> Option<Grammar> {
        let mut form = match self {
            Family::Hermes | Family::Generic => hermes::call_form(),
            Family::Llama3 => llama3::call_form(),
            Family::Mistral => mistral::call_form(),
            Family::Gemma => gemma::call_form(),
        };
        form.wrappers &= auto == AutoGrammar::LazyWithWrappers;
        form.call_or_answer = auto == AutoGrammar::CallOrAnswer;
        grammar::call_grammar(tools, choice, parallel, &form)
    }

    /// Splits a whole reply into content and calls, strictly (the stream parser, read
    /// whole); `cut_off` says the token limit ended it, `calls_only` that the turn had to
    /// be calls. A partial call is never returned: a reply cut while writing calls is
    /// [`ParseError::Truncated`].
    pub fn parse_reply_checked(
        self,
        text: &str,
        cut_off: bool,
        calls_only: bool,
    ) -> Result<ParsedReply, ParseError> {
        let reply = self.parse_complete(text, false, cut_off);
        if self.cut_inside_calls(text, cut_off, calls_only, !reply.calls.is_empty()) {
            return Err(ParseError::Truncated);
        }
        match reply.problem() {
            Some(problem) => Err(problem),
            None => Ok(reply.into_parsed()),
        }
    }

    /// Whether a reply that the token limit ended (`cut_off`) was cut while it was
    /// writing calls: a Hermes reply that opened a call (or had to) and does not end
    /// with a closed one; in the other families, a reply that had to call and holds no
    /// complete call. A partial call is never used.
    pub fn cut_inside_calls(
        self,
        text: &str,
        cut_off: bool,
        required: bool,
        has_calls: bool,
    ) -> bool {
        if !cut_off {
            return false;
        }
        match self {
            Family::Hermes | Family::Generic => {
                let end = text.trim_end();
                let writing = required || text.contains(hermes::CALL_OPEN) || end.ends_with('<');
                writing && !end.ends_with(hermes::CALL_CLOSE)
            }
            _ => required && !has_calls,
        }
    }

    /// [`Self::parse_reply_checked`] for a reply that was not cut and had no
    /// obligation to call.
    pub fn parse_reply(self, text: &str) -> Result<ParsedReply, ParseError> {
        self.parse_reply_checked(text, false, false)
    }

    /// The family's call syntax for the stream engine.
    fn syntax(self) -> &'static dyn CallSyntax {
        match self {
            Family::Hermes | Family::Generic => &hermes::SYNTAX,
            Family::Llama3 => &llama3::SYNTAX,
            Family::Mistral => &mistral::SYNTAX,
            Family::Gemma => &gemma::SYNTAX,
        }
    }

    /// A streaming parser for one reply (`reasoning_open`: the prompt opened a
    /// reasoning block).
    pub fn stream(self, reasoning_open: bool) -> FamilyStream {
        MarkerStream::new(self.syntax(), reasoning_open)
    }

    /// Parses a whole reply as the stream parser would, never failing (problems are
    /// listed in [`StreamReply::rejected`]).
    pub fn parse_complete(self, text: &str, reasoning_open: bool, cut_off: bool) -> StreamReply {
        let mut stream = self.stream(reasoning_open);
        stream.push(text);
        stream.finish(cut_off).reply
    }

    /// One call written in this family's syntax (for examples and history).
    pub fn call_text(self, name: &str, arguments: &Value) -> String {
        match self {
            Family::Hermes | Family::Generic => hermes::call_text(name, arguments),
            Family::Llama3 => llama3::call_text(name, arguments),
            Family::Mistral => mistral::call_text(name, arguments),
            Family::Gemma => gemma::call_text(name, arguments),
        }
    }

    /// Calls as they follow each other in one reply.
    pub fn calls_text(self, calls: &[(&str, &Value)]) -> String {
        let separator = match self {
            Family::Hermes | Family::Generic => "\n",
            Family::Llama3 => "; ",
            Family::Mistral | Family::Gemma => "",
        };
        calls
            .iter()
            .map(|(name, args)| self.call_text(name, args))
            .collect::<Vec<_>>()
            .join(separator)
    }

    /// The system-prompt text that teaches this family's call syntax, listing
    /// `definitions` one per line.
    pub fn emulated_instructions(self, definitions: &[Value]) -> String {
        match self {
            Family::Hermes | Family::Generic => hermes::emulated_instructions(definitions),
            _ => {
                let example =
                    self.call_text("TOOL_NAME", &serde_json::json!({"ARGUMENT": "VALUE"}));
                let mut out = format!(
                    "You can call tools. To call one, reply with exactly:\n{example}\n{}Each result comes back inside {}{}.\nThe tools:\n",
                    match self {
                        Family::Llama3 => "Separate several calls with \"; \".\n",
                        _ => "",
                    },
                    hermes::RESPONSE_OPEN,
                    hermes::RESPONSE_CLOSE,
                );
                for d in definitions {
                    out.push_str(&d.to_string());
                    out.push('\n');
                }
                out
            }
        }
    }

    /// Rewrites a conversation for a template that does not render tools: calls
    /// become this family's call text, tool results become `<tool_response>` user
    /// turns.
    pub fn emulate_history(self, messages: &[Message]) -> Vec<Message> {
        hermes::emulate_history_with(messages, |content, calls| {
            let pairs: Vec<(&str, &Value)> = calls
                .iter()
                .map(|c| (c.function.name.as_str(), &c.function.arguments))
                .collect();
            let calls = self.calls_text(&pairs);
            match (content.is_empty(), self) {
                (true, _) => calls,
                // Text before a Llama 3 call needs the tag.
                (false, Family::Llama3) => format!("{content}\n{}{calls}", llama3::PYTHON_TAG),
                (false, _) => format!("{content}\n{calls}"),
            }
        })
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Family {
    type Err = UnknownFamily;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        REGISTRY
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownFamily(s.to_string()))
    }
}

/// A family's streaming parser: the marker engine with the family's syntax.
pub type FamilyStream = MarkerStream;

/// Native calling (the template renders the tools) or emulated (tools taught in the
/// system prompt in the family's syntax, history rewritten).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolFormat {
    /// Native when the template supports tools, else emulated.
    #[default]
    Native,
    /// Always emulated.
    Emulated,
}

/// A name that is not a tool format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool format `{0}` (native or emulated)")]
pub struct UnknownToolFormat(String);

impl ToolFormat {
    /// The setting's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFormat::Native => "native",
            ToolFormat::Emulated => "emulated",
        }
    }
}

impl FromStr for ToolFormat {
    type Err = UnknownToolFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "native" => Ok(ToolFormat::Native),
            "emulated" => Ok(ToolFormat::Emulated),
            other => Err(UnknownToolFormat(other.to_string())),
        }
    }
}

/// How a turn under `auto` is constrained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoGrammar {
    /// Free text until the family's call marker, then the calls.
    Lazy,
    /// [`AutoGrammar::Lazy`], and calls the model writes as JSON in its own wrappers
    /// (fences, `<tools>`, bare JSON: Hermes) decoded under the tool grammar too.
    LazyWithWrappers,
    /// From the first token, either the family's calls or prose that opens no call.
    CallOrAnswer,
}
