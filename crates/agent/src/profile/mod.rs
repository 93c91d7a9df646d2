//! Harness profiles for A/B runs: the same tools and model, driven four ways. Each is
//! an honest implementation of its style (docs/profiles.md), written as a strategy —
//! how the request is shaped, how a reply is read, what becomes of each kind of reply
//! — in a file of its own; the loop asks the strategy and never the profile's name.

mod full;
mod naive;
mod react;
mod structured;

use std::str::FromStr;

use rein_engine::{Completion, ReadMode};
use rein_format::{Family, ToolFormat};
use rein_protocol::{Message, ToolCall, ToolChoice};
use serde::{Deserialize, Serialize};

use crate::recovery::FailureClass;
use crate::validate::ProposedCall;

/// How the loop talks to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Tools described in the prompt; free text taken as the answer or searched loosely
    /// for calls; no grammar, no retry.
    Naive,
    /// Thought / Action / Action Input / Observation text, parsed by pattern.
    React,
    /// Every reply forced to be a call (a `finish` call carries the answer) by the
    /// grammar; a reply that fails is retried blindly.
    Structured,
    /// Everything rein has: lazy grammar, classified recovery, repetition nudges,
    /// truncation retries, verification guard.
    Full,
}

impl Profile {
    /// The profile's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Naive => "naive",
            Profile::React => "react",
            Profile::Structured => "structured",
            Profile::Full => "full",
        }
    }

    /// Whether replies are decoded under the call grammar.
    pub fn uses_grammar(self) -> bool {
        matches!(self, Profile::Structured | Profile::Full)
    }

    /// The profile's strategy.
    pub(crate) fn strategy(self) -> &'static dyn Strategy {
        match self {
            Profile::Naive => &naive::Naive,
            Profile::React => &react::React,
            Profile::Structured => &structured::Structured,
            Profile::Full => &full::Full,
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A profile name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile `{0}`: use naive, react, structured or full")]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "naive" => Ok(Profile::Naive),
            "react" => Ok(Profile::React),
            "structured" => Ok(Profile::Structured),
            "full" => Ok(Profile::Full),
            other => Err(UnknownProfile(other.to_string())),
        }
    }
}

/// How one turn's request is shaped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    /// The offered tools go with the request (else the profile describes them itself).
    pub tools: bool,
    /// Native or emulated tool calling.
    pub tool_format: ToolFormat,
    /// Which calls the turn allows.
    pub choice: ToolChoice,
    /// Decode under the call grammar.
    pub constrained: bool,
    /// How the reply is read.
    pub read: ReadMode,
    /// Strings that end the reply.
    pub stop: Vec<String>,
}

/// How a dropped reply is asked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryMode {
    /// The same request.
    Same,
    /// The same request, and the reply may not end blank (the reply was empty).
    NotBlank,
    /// Double the reply's token allowance (a call was cut off).
    LargerAllowance,
    /// Decode under the calls-only grammar (a call was written in another format).
    CallsOnly,
    /// Decode under the calls-only grammar, several calls allowed (several calls were
    /// written in another format).
    SeveralCalls,
    /// Decode as a call of `write_file` (the task's output file is missing and the
    /// results to put in it are there).
    WriteOutput,
}

/// What a reply amounts to, as the profile reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Calls to run, with the text around them.
    Calls {
        /// Text outside the calls.
        content: Option<String>,
        /// The calls, in order.
        calls: Vec<ProposedCall>,
        /// How their format was repaired, if it was.
        format_repair: Option<String>,
    },
    /// The reply is dropped and the turn asked again.
    Retry {
        /// The failure's class.
        class: FailureClass,
        /// What exactly, for the trace.
        detail: String,
        /// The note the retry carries, if the profile explains failures.
        note: Option<String>,
        /// How the turn is asked again.
        mode: RetryMode,
        /// Messages kept in the history before the retry (ReAct's observation).
        keep: Vec<Message>,
    },
    /// A final answer.
    Answer(String),
}

impl Step {
    /// The checked calls of a reply the reader read, to run.
    pub(crate) fn calls(reply: &rein_engine::Reply) -> Self {
        Step::Calls {
            content: reply.content.clone(),
            calls: reply
                .calls
                .iter()
                .cloned()
                .map(ProposedCall::checked)
                .collect(),
            format_repair: reply.format_repair.clone(),
        }
    }

    /// A retry that keeps nothing.
    pub(crate) fn retry(
        class: FailureClass,
        detail: impl Into<String>,
        note: Option<String>,
        mode: RetryMode,
    ) -> Self {
        Step::Retry {
            class,
            detail: detail.into(),
            note,
            mode,
            keep: Vec::new(),
        }
    }
}

/// What a profile reads a reply against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadContext<'a> {
    /// The model's call syntax.
    pub family: Family,
    /// The names of the offered tools.
    pub tool_names: &'a [String],
    /// The first line of the latest step's failure, when its last call failed.
    pub latest_failure: Option<&'a str>,
    /// The reply was cut for looping and holds a complete call that no earlier call
    /// made (with the same arguments).
    pub new_call: bool,
    /// Tools whose calls waited for an earlier result and have not run since.
    pub planned: &'a [String],
    /// The reply was decoded as an answer (no call may open it).
    pub answering: bool,
}

/// What a profile decides.
pub(crate) trait Strategy: Sync {
    /// Whether the profile offers the `finish` tool.
    fn offers_finish(&self) -> bool {
        false
    }

    /// Whether the prompt describes the tools in the profile's own text (then they do
    /// not go with the request).
    fn describes_tools(&self) -> bool {
        false
    }

    /// The request of a turn (`forced`: the retry must be such a call).
    fn shape(&self, tool_format: ToolFormat, forced: Option<&ToolChoice>) -> Shape;

    /// What a completion amounts to.
    fn read(&self, completion: &Completion, context: ReadContext<'_>) -> Step;

    /// Whether a call that fails validation gets a note saying what to fix (else it is
    /// retried blindly). Profiles that do not validate run every call as written.
    fn explains_rejections(&self) -> bool {
        false
    }

    /// Whether a final answer may be held until edits are verified.
    fn guards_answers(&self) -> bool {
        false
    }

    /// How the exchange goes into the history: the assistant's calls as one message,
    /// then each result as a tool message (the chat template's own shape).
    fn record(&self, exchange: Exchange<'_>, history: &mut Vec<Message>) {
        let content = exchange.content.unwrap_or_default();
        history.push(Message {
            tool_calls: exchange
                .calls
                .iter()
                .map(|c| ToolCall::function(c.id.clone(), c.name.clone(), c.arguments.clone()))
                .collect(),
            content: (!content.is_empty()).then(|| content.to_string()),
            ..Message::assistant("")
        });
        for (call, text) in exchange.calls.iter().zip(exchange.results) {
            history.push(Message::tool_result(&call.id, &call.name, text.clone()));
        }
    }
}

/// One turn's calls and their results, for the history.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exchange<'a> {
    /// The raw reply.
    pub raw: &'a str,
    /// Text outside the calls.
    pub content: Option<&'a str>,
    /// The calls that ran.
    pub calls: &'a [crate::validate::ReadyCall],
    /// Each call's result, in order.
    pub results: &'a [String],
}
