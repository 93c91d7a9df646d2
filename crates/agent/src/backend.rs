//! What the loop asks of a model: one completion for a prepared conversation.

use std::future::Future;
use std::time::Duration;

use rein_format::ToolChoice;
use rein_protocol::{Grammar, Message};
use serde_json::Value;

/// One model turn, fully prepared by the loop.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The conversation, in the shape the backend's template reads.
    pub messages: Vec<Message>,
    /// Tool definitions for templates that render tools themselves; `None` when the
    /// tools are taught in the system prompt (or there are none).
    pub tools: Option<Vec<Value>>,
    /// The decoding constraint, if any.
    pub grammar: Option<Grammar>,
    /// Which calls the turn allows (what the grammar enforces; remote backends pass it on).
    pub tool_choice: ToolChoice,
    /// Whether a reply may hold several calls.
    pub parallel_calls: bool,
    /// Most tokens in the reply.
    pub max_tokens: u32,
    /// Strings that end the reply.
    pub stop: Vec<String>,
    /// Sampling temperature (0 is greedy).
    pub temperature: f32,
    /// Sampling seed.
    pub seed: u32,
}

/// A model's reply and what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    /// The raw text.
    pub text: String,
    /// The token limit (or the context) ended the reply.
    pub cut_off: bool,
    /// Tokens in the prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens taken from the KV cache instead of evaluated.
    pub reused_tokens: usize,
    /// Tokens generated.
    pub completion_tokens: usize,
    /// Time to the first generated token.
    pub ttft: Duration,
    /// Time for the whole turn.
    pub elapsed: Duration,
}

/// Why a backend could not answer.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] rein_llama::EngineError),
    /// The prompt could not be rendered.
    #[error(transparent)]
    Template(#[from] rein_format::TemplateError),
    /// Anything else, said plainly.
    #[error("{0}")]
    Other(String),
}

/// A model the loop can drive.
pub trait Backend: Send {
    /// Whether the chat template renders tool definitions and calls itself.
    fn native_tools(&self) -> bool;

    /// The tool-call format the model writes (Hermes unless the backend knows better).
    fn family(&self) -> rein_format::Family {
        rein_format::Family::Hermes
    }

    /// The context size in tokens, when the backend knows it (for compaction).
    fn context_tokens(&self) -> Option<usize> {
        None
    }

    /// A short description of the model, for traces and results.
    fn describe(&self) -> String;

    /// Answers one turn.
    fn complete(
        &mut self,
        request: TurnRequest,
    ) -> impl Future<Output = Result<Completion, BackendError>> + Send;
}
