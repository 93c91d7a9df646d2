//! A backend that replays written replies: for tests of the loop's logic, never in
//! place of a real model. Each turn is prepared by the real format layer (a Hermes
//! template that renders tools, or ChatML that cannot) and each reply read by the real
//! reader, so tests see what a local model's turns would carry.

use std::collections::VecDeque;

use rein_engine::{Backend, BackendError, BackendInfo, Completion, ReplySink, TurnRequest};
use rein_format::{ModelFormat, CHATML_TEMPLATE};
use rein_protocol::{Grammar, Message};
use serde_json::Value;

/// A ChatML template that renders tools (so the Hermes family and native calling).
const TOOLS_TEMPLATE: &str = "{% if tools %}<|im_start|>system\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}<|im_end|>\n{% endif %}{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + (message['content'] or '') + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// One turn as the scripted model received it, prepared.
#[derive(Debug, Clone)]
pub struct SeenTurn {
    /// The messages as the template received them.
    pub messages: Vec<Message>,
    /// Tool definitions the template rendered (native calling).
    pub tools: Option<Vec<Value>>,
    /// The decoding constraint.
    pub grammar: Option<Grammar>,
    /// Stop strings.
    pub stop: Vec<String>,
    /// The reply's token allowance.
    pub max_tokens: u32,
    /// The request as sent.
    pub request: TurnRequest,
}

/// Replies in order; each request is kept for inspection.
#[derive(Debug)]
pub struct ScriptedBackend {
    replies: VecDeque<ScriptedReply>,
    /// Every turn received, in order.
    pub requests: Vec<SeenTurn>,
    format: ModelFormat,
    context: Option<usize>,
    dense_digits: bool,
    decodes_grammars: bool,
}

/// One written reply.
#[derive(Debug, Clone)]
pub struct ScriptedReply {
    /// The text.
    pub text: String,
    /// Pretend the token limit cut it.
    pub cut_off: bool,
    /// Pretend it was cut for repeating itself.
    pub looped: bool,
}

impl ScriptedBackend {
    /// Replies `texts` in order; `native` says whether the pretend template renders tools.
    pub fn new<I, S>(texts: I, native: bool) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let (template, architecture) = if native {
            (TOOLS_TEMPLATE, "qwen2")
        } else {
            (CHATML_TEMPLATE, "llama")
        };
        let format = match ModelFormat::detect(Some(template), architecture) {
            Ok(format) => format,
            Err(error) => panic!("the scripted backend's template does not compile: {error}"),
        };
        Self {
            replies: texts
                .into_iter()
                .map(|t| ScriptedReply {
                    text: t.into(),
                    cut_off: false,
                    looped: false,
                })
                .collect(),
            requests: Vec::new(),
            format,
            context: None,
            dense_digits: false,
            decodes_grammars: false,
        }
    }

    /// Pretends the model has a context of `tokens` (prompt tokens are counted as a
    /// quarter of the characters).
    pub fn with_context(mut self, tokens: usize) -> Self {
        self.context = Some(tokens);
        self
    }

    /// Counts every digit as a token of its own (as Qwen2.5's tokenizer does), so
    /// text full of numbers costs more tokens per character than other text.
    pub fn with_dense_digits(mut self) -> Self {
        self.dense_digits = true;
        self
    }

    /// Says it decodes under grammars, as a local model does (the replies are still the
    /// scripted texts).
    pub fn with_grammar_decoding(mut self) -> Self {
        self.decodes_grammars = true;
        self
    }

    /// Adds a reply that the token limit cut.
    pub fn push_cut_off(&mut self, text: impl Into<String>) {
        self.replies.push_back(ScriptedReply {
            text: text.into(),
            cut_off: true,
            looped: false,
        });
    }

    /// Adds a reply that was cut for repeating itself.
    pub fn push_looped(&mut self, text: impl Into<String>) {
        self.replies.push_back(ScriptedReply {
            text: text.into(),
            cut_off: true,
            looped: true,
        });
    }

    /// Adds a reply.
    pub fn push(&mut self, text: impl Into<String>) {
        self.replies.push_back(ScriptedReply {
            text: text.into(),
            cut_off: false,
            looped: false,
        });
    }
}

impl Backend for ScriptedBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            description: "scripted".into(),
            family: self.format.family,
            context_tokens: self.context,
            decodes_grammars: self.decodes_grammars,
        }
    }

    async fn complete(
        &mut self,
        request: TurnRequest,
        events: &mut dyn ReplySink,
    ) -> Result<Completion, BackendError> {
        let prepared = self.format.plan(&request.spec());
        let dense = self.dense_digits;
        let tokens = |text: &str| {
            let digits = text.chars().filter(char::is_ascii_digit).count();
            match dense {
                true => (text.len() - digits) / 4 + digits + 1,
                false => text.len() / 4 + 1,
            }
        };
        let prompt_tokens: usize = prepared
            .messages
            .iter()
            .map(|m| tokens(m.content.as_deref().unwrap_or_default()))
            .sum();
        self.requests.push(SeenTurn {
            messages: prepared.messages.clone(),
            tools: prepared.tools.clone(),
            grammar: prepared.grammar.clone(),
            stop: prepared.stops.clone(),
            max_tokens: request.max_tokens.unwrap_or(0),
            request: request.clone(),
        });
        // Like a real session, a prompt longer than the context is refused (and the
        // reply stays for the next request).
        if let Some(limit) = self.context.filter(|limit| prompt_tokens > *limit) {
            return Err(BackendError::PromptTooLong {
                prompt_tokens,
                limit,
            });
        }
        let reply = self
            .replies
            .pop_front()
            .ok_or_else(|| BackendError::Other("the script has no more replies".into()))?;
        let mut reader =
            self.format
                .reader(request.tools.as_deref(), &request.choice, request.read);
        events.events(reader.push(&reply.text));
        let read = match reply.looped {
            true => reader.finish_looped(),
            false => reader.finish(reply.cut_off),
        };
        events.events(read.events);
        Ok(Completion {
            completion_tokens: reply.text.len() / 4 + 1,
            text: reply.text,
            reply: read.reply,
            cut_off: reply.cut_off,
            looped: reply.looped,
            prompt_tokens,
            prepared: Some(prepared),
            ..Completion::default()
        })
    }
}
