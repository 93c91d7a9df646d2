//! The engine's public vocabulary: configuration, sampling, requests, results, events.

use std::path::PathBuf;
use std::time::Duration;

pub use rein_models::KvCacheType;

/// A token id of the loaded model's vocabulary.
pub type TokenId = i32;

/// How a model is loaded and its context sized.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The GGUF file.
    pub model_path: PathBuf,
    /// Context size in tokens shared by all sessions, each of which may use an equal
    /// share; `None` = the model's training size capped at 4096.
    pub n_ctx: Option<u32>,
    /// Tokens per `decode` call during prefill.
    pub n_batch: u32,
    /// CPU threads; `None` = the number of cores.
    pub threads: Option<u32>,
    /// Layers offloaded to a GPU (0 on CPU builds).
    pub gpu_layers: u32,
    /// Map the file instead of reading it.
    pub use_mmap: bool,
    /// How many sessions (KV sequences) may exist at once.
    pub max_sessions: u32,
    /// How long a new session waits for a free sequence before it is refused.
    pub queue_timeout: Duration,
    /// Which library enforces grammars.
    pub grammar_engine: GrammarEngine,
    /// The KV cache's element type (f16 by default; q8_0 and q4_0 halve and quarter it).
    pub kv_type: KvCacheType,
    /// Keep the KV of prompts' stable prefixes on disk for the next process (see
    /// [`GenerateRequest::persist_prefix`]); `None` = no cache on disk.
    pub prompt_cache: Option<crate::PromptCacheConfig>,
    /// Tokens drafted (by prompt lookup, or by `draft_model` when one is set) and
    /// verified in the same `decode` as each generated token (speculative decoding);
    /// 0 = plain decoding. A drafted token is kept only where the sampler picks it, so
    /// the output is plain decoding's up to the rounding of batched kernels
    /// (docs/decisions/0031).
    pub draft_tokens: u32,
    /// A smaller GGUF model with the same tokenizer that drafts the tokens (instead of
    /// prompt lookup); refused at load when its tokenizer differs.
    pub draft_model: Option<PathBuf>,
    /// A prompt evaluated while other generations run shares each `decode` with their
    /// next tokens (one call per step instead of two).
    pub mixed_batches: bool,
    /// Under llguidance, the tokens a grammar allows as the only continuation (the
    /// rest of a tool's name, keys, punctuation, closing markers) are appended
    /// without sampling and evaluated in one batch with the next pick.
    pub forced_tokens: bool,
}

/// The library that enforces a grammar while sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GrammarEngine {
    /// llama.cpp's GBNF sampler, checked "first" (docs/decisions/0007).
    #[default]
    Gbnf,
    /// llguidance (builds with the `llguidance` feature), reading rein's GBNF in its
    /// Lark form; a lazy grammar (no triggers in llguidance) or one it cannot read is
    /// held by the GBNF sampler.
    Llguidance,
}

impl GrammarEngine {
    /// The engine's name, as `--grammar-engine` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gbnf => "gbnf",
            Self::Llguidance => "llguidance",
        }
    }
}

impl std::str::FromStr for GrammarEngine {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "gbnf" => Ok(Self::Gbnf),
            "llguidance" => Ok(Self::Llguidance),
            other => Err(format!(
                "unknown grammar engine `{other}` (gbnf or llguidance)"
            )),
        }
    }
}

impl EngineConfig {
    /// Tokens per `decode` call unless set otherwise.
    pub const DEFAULT_N_BATCH: u32 = rein_models::DEFAULT_N_BATCH;

    /// Defaults for `model_path`: 4096 context, batches of 512, all cores, CPU, mmap,
    /// one session, a 300 s wait for a free session.
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            n_ctx: None,
            n_batch: Self::DEFAULT_N_BATCH,
            threads: None,
            gpu_layers: 0,
            use_mmap: true,
            max_sessions: 1,
            queue_timeout: Duration::from_secs(300),
            grammar_engine: GrammarEngine::Gbnf,
            kv_type: KvCacheType::F16,
            prompt_cache: None,
            draft_tokens: 0,
            draft_model: None,
            mixed_batches: true,
            forced_tokens: true,
        }
    }
}

/// How the next token is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingParams {
    /// 0 = greedy.
    pub temperature: f32,
    /// Nucleus sampling mass (1 = off).
    pub top_p: f32,
    /// Keep the k most likely tokens (0 = off).
    pub top_k: i32,
    /// Drop tokens below this fraction of the best one's probability (0 = off).
    pub min_p: f32,
    /// Penalty for repeating recent tokens (1 = off).
    pub repeat_penalty: f32,
    /// How many recent tokens the penalty looks at.
    pub repeat_last_n: i32,
    /// Random seed for sampling.
    pub seed: u32,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            temperature: 0.7,
            top_p: 0.95,
            top_k: 40,
            min_p: 0.05,
            repeat_penalty: 1.0,
            repeat_last_n: 64,
            seed: 0,
        }
    }
}

impl SamplingParams {
    /// Always the most likely token.
    pub fn greedy() -> Self {
        Self {
            temperature: 0.0,
            ..Self::default()
        }
    }
}

/// What to generate from.
#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    /// Text, tokenized with the model's special tokens parsed (rendered templates).
    Text(String),
    /// A rendered template whose byte ranges `literal` came from content: special
    /// tokens are parsed everywhere else, and those ranges are plain text (see
    /// [`crate::Engine::tokenize_prompt`]).
    Rendered {
        /// The prompt.
        text: String,
        /// Sorted, disjoint byte ranges of `text` tokenized as plain text.
        literal: Vec<std::ops::Range<usize>>,
    },
    /// Tokens as they are.
    Tokens(Vec<TokenId>),
}

/// One generation request.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The full prompt of this turn; a prefix already in the session's KV cache is reused.
    pub prompt: Prompt,
    /// Sampling settings.
    pub sampling: SamplingParams,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Strings that end generation (not included in the output).
    pub stop: Vec<String>,
    /// Keep generating past end-of-generation tokens (benchmarks: a fixed token count).
    pub ignore_eog: bool,
    /// The reply may not end blank: end-of-generation tokens are masked until a token
    /// other than whitespace was generated (a retry after an empty reply).
    pub no_blank: bool,
    /// Constrain the output to a grammar.
    pub grammar: Option<rein_protocol::Grammar>,
    /// The prompt's first bytes that other runs start with too (the system prompt and
    /// tool block): with a prompt cache configured, their KV is loaded from disk when a
    /// file holds it, and saved there when none does. Text prompts only.
    pub persist_prefix: Option<usize>,
}

impl GenerateRequest {
    /// A request with default sampling, 256 tokens and no stop strings.
    pub fn new(prompt: Prompt) -> Self {
        Self {
            prompt,
            sampling: SamplingParams::default(),
            max_tokens: 256,
            stop: Vec::new(),
            ignore_eog: false,
            no_blank: false,
            grammar: None,
            persist_prefix: None,
        }
    }
}

/// Why generation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The model produced an end-of-generation token.
    EndOfGeneration,
    /// A stop string was produced (it is not part of the text).
    StopString(String),
    /// `max_tokens` were generated.
    MaxTokens,
    /// The context window is full.
    ContextFull,
    /// The text repeated one short block over a long span (see `repetition`).
    Loop,
    /// The receiver of the stream went away.
    Cancelled,
}

impl StopReason {
    /// A short stable name (`eog`, `stop`, `length`, `context`, `loop`, `cancelled`).
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::EndOfGeneration => "eog",
            StopReason::StopString(_) => "stop",
            StopReason::MaxTokens => "length",
            StopReason::ContextFull => "context",
            StopReason::Loop => "loop",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// The result of one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateOutput {
    /// The generated text (stop string excluded).
    pub text: String,
    /// The generated tokens (EOG excluded).
    pub tokens: Vec<TokenId>,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Prompt tokens in this turn.
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV was reused from the session's previous turn.
    pub reused_tokens: usize,
    /// Of those, copied from another session's KV sequence (a shared prefix).
    pub shared_tokens: usize,
    /// Of those, read from the prompt cache on disk.
    pub loaded_tokens: usize,
    /// Prompt tokens evaluated in a `decode` shared with the next tokens of other
    /// running generations (see [`EngineConfig::mixed_batches`]).
    pub mixed_tokens: usize,
    /// Time spent evaluating the prompt.
    pub prefill_time: Duration,
    /// Time spent generating.
    pub decode_time: Duration,
    /// Tokens drafted by prompt lookup (see [`EngineConfig::draft_tokens`]).
    pub drafted_tokens: usize,
    /// Of those, the ones the sampler picked: generated without a `decode` of their own.
    pub accepted_tokens: usize,
    /// Tokens the grammar forced, appended without sampling (see
    /// [`EngineConfig::forced_tokens`]); counted in `tokens`.
    pub forced_tokens: usize,
    /// Where in `tokens` the forced ones are.
    pub forced_positions: Vec<usize>,
    /// The library that held the reply to its grammar; `None` without one.
    pub grammar_engine: Option<GrammarEngine>,
}

/// What a streaming generation reports.
#[derive(Debug, Clone, PartialEq)]
pub enum GenerateEvent {
    /// More text.
    Text(String),
    /// The end, with the full result.
    Done(GenerateOutput),
}

/// Facts about the loaded model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The GGUF file.
    pub path: PathBuf,
    /// llama.cpp's description (`llama 135M Q4_1`).
    pub description: String,
    /// `tokenizer.chat_template`, when present.
    pub chat_template: Option<String>,
    /// The BOS token's text.
    pub bos_token: String,
    /// The EOS token's text.
    pub eos_token: String,
    /// The tokens that mark the conversation's structure: control tokens, and
    /// user-defined ones spelled like a tag (not Gemma's whitespace runs). Content may
    /// hold their texts only as plain text.
    pub control_tokens: Vec<ControlToken>,
    /// Context size of this engine.
    pub n_ctx: u32,
    /// Context size the model was trained with.
    pub n_ctx_train: u32,
    /// Vocabulary size.
    pub n_vocab: i32,
    /// Bytes of weights as llama.cpp loaded them.
    pub weights_bytes: u64,
    /// Parameter count as llama.cpp reports it.
    pub n_params: u64,
    /// Threads used.
    pub threads: u32,
    /// Sessions that may exist at once.
    pub max_sessions: u32,
}

/// A token the template's markers are made of (control, or user-defined and spelled
/// like a tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlToken {
    /// Its id.
    pub id: TokenId,
    /// Its text.
    pub text: String,
}

impl ModelInfo {
    /// The tokens one session may hold: its equal share of the context. Every session
    /// staying inside its share is what keeps the shared KV cache from running out
    /// while others generate.
    pub fn session_context(&self) -> u32 {
        session_share(self.n_ctx, self.max_sessions)
    }

    /// The architecture (`general.architecture`, the description's first word).
    pub fn architecture(&self) -> &str {
        self.description
            .split_whitespace()
            .next()
            .unwrap_or_default()
    }
}

/// One session's share of a context of `n_ctx` tokens split among `sessions`.
pub(crate) fn session_share(n_ctx: u32, sessions: u32) -> u32 {
    n_ctx / sessions.max(1)
}
