//! A backend that replays written replies: for tests of the loop's logic, never in
//! place of a real model.

use std::collections::VecDeque;

use crate::backend::{Backend, BackendError, Completion, TurnRequest};

/// Replies in order; each request is kept for inspection.
#[derive(Debug, Default)]
pub struct ScriptedBackend {
    replies: VecDeque<ScriptedReply>,
    /// Every request received, in order.
    pub requests: Vec<TurnRequest>,
    native: bool,
    context: Option<usize>,
}

/// One written reply.
#[derive(Debug, Clone)]
pub struct ScriptedReply {
    /// The text.
    pub text: String,
    /// Pretend the token limit cut it.
    pub cut_off: bool,
}

impl ScriptedBackend {
    /// Replies `texts` in order; `native` says whether the pretend template renders tools.
    pub fn new<I, S>(texts: I, native: bool) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            replies: texts
                .into_iter()
                .map(|t| ScriptedReply {
                    text: t.into(),
                    cut_off: false,
                })
                .collect(),
            requests: Vec::new(),
            native,
            context: None,
        }
    }

    /// Pretends the model has a context of `tokens` (prompt tokens are counted as a
    /// quarter of the characters).
    pub fn with_context(mut self, tokens: usize) -> Self {
        self.context = Some(tokens);
        self
    }

    /// Adds a reply that the token limit cut.
    pub fn push_cut_off(&mut self, text: impl Into<String>) {
        self.replies.push_back(ScriptedReply {
            text: text.into(),
            cut_off: true,
        });
    }

    /// Adds a reply.
    pub fn push(&mut self, text: impl Into<String>) {
        self.replies.push_back(ScriptedReply {
            text: text.into(),
            cut_off: false,
        });
    }
}

impl Backend for ScriptedBackend {
    fn native_tools(&self) -> bool {
        self.native
    }

    fn describe(&self) -> String {
        "scripted".into()
    }

    fn context_tokens(&self) -> Option<usize> {
        self.context
    }

    async fn complete(&mut self, request: TurnRequest) -> Result<Completion, BackendError> {
        let prompt_tokens = request
            .messages
            .iter()
            .map(|m| m.content.as_deref().unwrap_or_default().len() / 4 + 1)
            .sum();
        self.requests.push(request);
        let reply = self
            .replies
            .pop_front()
            .ok_or_else(|| BackendError::Other("the script has no more replies".into()))?;
        Ok(Completion {
            completion_tokens: reply.text.len() / 4 + 1,
            text: reply.text,
            cut_off: reply.cut_off,
            prompt_tokens,
            ..Completion::default()
        })
    }
}
