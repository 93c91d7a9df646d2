//! One model turn as a front end asks for it: what to say, which tools, how the reply
//! is constrained and read, and how it is sampled.

use std::sync::Arc;

use rein_format::{DescriptionStyle, ReadMode, ToolFormat, ToolSet, TurnSpec};
use rein_protocol::{Message, ToolChoice};
use rein_schema::Schema;

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 is greedy.
    pub temperature: f32,
    /// Nucleus sampling mass (1 = off).
    pub top_p: f32,
    /// Random seed.
    pub seed: u32,
    /// Penalty for repeating recent tokens (1 = off).
    pub repeat_penalty: f32,
}

impl Default for Sampling {
    /// Temperature 0.7, top-p 0.95, seed 0, no repeat penalty.
    fn default() -> Self {
        Sampling {
            temperature: 0.7,
            top_p: 0.95,
            seed: 0,
            repeat_penalty: 1.0,
        }
    }
}

/// One turn, fully described.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The conversation (calls and results as structured messages).
    pub messages: Vec<Message>,
    /// The tools offered; `None` when the caller describes tools in its own text.
    pub tools: Option<Arc<ToolSet>>,
    /// Which calls the turn allows.
    pub choice: ToolChoice,
    /// Native tool calling when the model's template can, or emulated.
    pub tool_format: ToolFormat,
    /// How emulated tools are described.
    pub describe: DescriptionStyle,
    /// Decode under the call grammar.
    pub constrained: bool,
    /// Several calls per reply.
    pub parallel_calls: bool,
    /// Without calls, a reply of this schema.
    pub response: Option<Schema>,
    /// Show an example of several calls in one reply (parallel calls only).
    pub call_example: bool,
    /// Decode calls in the model's own wrappers under the tool grammar too.
    pub wrapper_grammar: bool,
    /// Decode an `auto` turn from its first token as calls or an answer.
    pub call_or_answer: bool,
    /// How the reply is read.
    pub read: ReadMode,
    /// Sampling.
    pub sampling: Sampling,
    /// Most tokens in the reply; `None`: whatever room the context leaves.
    pub max_tokens: Option<u32>,
    /// The reply must be prose (without another grammar, it may not open with a call
    /// wrapper).
    pub prose: bool,
    /// Strings that end the reply.
    pub stop: Vec<String>,
    /// The reply may not end blank: the model's end token is masked until it has said
    /// something (local models; a remote backend ignores it).
    pub no_blank: bool,
}

impl TurnRequest {
    /// A turn of `messages` without tools, read as text.
    pub fn text(messages: Vec<Message>) -> Self {
        TurnRequest {
            messages,
            tools: None,
            choice: ToolChoice::Auto,
            tool_format: ToolFormat::Native,
            describe: DescriptionStyle::Full,
            constrained: false,
            parallel_calls: true,
            response: None,
            call_example: false,
            wrapper_grammar: true,
            call_or_answer: false,
            prose: false,
            read: ReadMode::TEXT,
            sampling: Sampling::default(),
            max_tokens: None,
            stop: Vec::new(),
            no_blank: false,
        }
    }

    /// The turn as the format layer prepares it.
    pub fn spec(&self) -> TurnSpec<'_> {
        TurnSpec {
            messages: &self.messages,
            tools: self.tools.as_deref(),
            choice: &self.choice,
            tool_format: self.tool_format,
            describe: self.describe,
            constrained: self.constrained,
            parallel: self.parallel_calls,
            response: self.response.as_ref(),
            call_example: self.call_example,
            wrapper_grammar: self.wrapper_grammar,
            call_or_answer: self.call_or_answer,
            prose: self.prose,
            stop: &self.stop,
        }
    }

    /// Whether the model may call tools this turn.
    pub fn offers_tools(&self) -> bool {
        self.spec().offers_tools()
    }
}
