//! What a model behind rein does: answer one turn, streaming what it reads.

use std::future::Future;
use std::time::Duration;

use rein_format::{Family, PreparedTurn, Reply, ReplyEvent};

use crate::TurnRequest;

/// A model's reply and what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    /// The raw text (for traces; a remote reply's content and calls as they came).
    pub text: String,
    /// The reply as read (content, reasoning, checked calls, problems).
    pub reply: Reply,
    /// The token limit (or the context) ended the reply, or it was cut for looping.
    pub cut_off: bool,
    /// The reply was cut because it kept repeating one short block.
    pub looped: bool,
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
    /// The turn as it was prepared, when the backend prepared it locally.
    pub prepared: Option<PreparedTurn>,
}

/// What a backend is.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendInfo {
    /// A short description, for traces and results.
    pub description: String,
    /// The tool-call family the model writes.
    pub family: Family,
    /// The context one conversation may use, when known (for compaction).
    pub context_tokens: Option<usize>,
    /// Replies are decoded under the turn's grammar (a local model); a remote backend
    /// sends the tools instead and ignores grammars.
    pub decodes_grammars: bool,
}

/// Why a backend could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// Every session stayed busy for the whole queue timeout.
    #[error("all {0} sessions are in use and none was freed in time; retry later")]
    Busy(u32),
    /// The prompt does not fit the context with room for a reply.
    #[error("the prompt has {prompt_tokens} tokens but a session's context holds {limit}; shorten the prompt or raise --ctx")]
    PromptTooLong {
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// The context one conversation may use.
        limit: usize,
    },
    /// The tool or response schema could not become a grammar.
    #[error("the grammar does not compile: {0}")]
    Grammar(String),
    /// The chat template cannot render these messages.
    #[error("the chat template cannot render these messages: {0}")]
    Template(String),
    /// Anything else, said plainly.
    #[error("{0}")]
    Other(String),
}

/// Receives a reply's events as the backend reads them.
pub trait ReplySink: Send {
    /// One event.
    fn event(&mut self, event: ReplyEvent);

    /// Several events, in order.
    fn events(&mut self, events: Vec<ReplyEvent>) {
        for event in events {
            self.event(event);
        }
    }
}

impl<F: FnMut(ReplyEvent) + Send> ReplySink for F {
    fn event(&mut self, event: ReplyEvent) {
        self(event);
    }
}

/// A sink for callers that only want the whole reply.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoEvents;

impl ReplySink for NoEvents {
    fn event(&mut self, _event: ReplyEvent) {}
}

/// A model the agent loop (or a server request) can drive, one turn at a time.
pub trait Backend: Send {
    /// What it is.
    fn info(&self) -> BackendInfo;

    /// Answers one turn, handing each reply event to `events` as it is read.
    fn complete(
        &mut self,
        request: TurnRequest,
        events: &mut dyn ReplySink,
    ) -> impl Future<Output = Result<Completion, BackendError>> + Send;
}

/// One loaded model that opens a backend per conversation (a KV sequence each), for
/// front ends that run many at once: `rein serve`, the eval runner.
pub trait SessionSource: Send + Sync + 'static {
    /// The backend of one conversation.
    type Session: Backend + 'static;

    /// What the model is.
    fn info(&self) -> BackendInfo;

    /// How many conversations may run at once.
    fn max_sessions(&self) -> u32;

    /// Opens a conversation, waiting in a fair queue while all are taken (then
    /// [`BackendError::Busy`]).
    fn session(&self) -> impl Future<Output = Result<Self::Session, BackendError>> + Send;

    /// Tokens in the prompt `request` becomes, without opening a session (so a request
    /// that cannot fit is refused before it waits).
    fn count_prompt(
        &self,
        request: &TurnRequest,
    ) -> impl Future<Output = Result<usize, BackendError>> + Send;
}
