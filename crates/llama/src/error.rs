//! Errors of the engine, each with what to do about it.

use std::path::PathBuf;

/// Everything that can go wrong in the engine.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// llama.cpp's backend did not start.
    #[error("llama.cpp backend failed to initialise: {0}")]
    Backend(String),
    /// llama.cpp refused the model file.
    #[error("llama.cpp could not load {path}: {reason}")]
    ModelLoad {
        /// The file.
        path: PathBuf,
        /// llama.cpp's reason.
        reason: String,
    },
    /// The context could not be created (often: not enough memory for `n_ctx`).
    #[error("could not create a context of {n_ctx} tokens: {reason}; try a smaller --ctx")]
    Context {
        /// The context size asked for.
        n_ctx: u32,
        /// llama.cpp's reason.
        reason: String,
    },
    /// The prompt does not fit the context with room for one generated token.
    #[error("the prompt has {prompt_tokens} tokens but a session's context holds {n_ctx}; shorten the prompt or raise --ctx")]
    PromptTooLong {
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// The context one session may use (the engine's context over its sessions).
        n_ctx: u32,
    },
    /// The prompt is empty.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// The session is still generating; a session runs one generation at a time.
    #[error("this session is still generating; wait for the running generation to end")]
    SessionBusy,
    /// All session slots are taken.
    #[error("all {0} sessions are in use and none was freed in time; raise the session limit or retry later")]
    NoFreeSession(u32),
    /// A token id outside the vocabulary.
    #[error("token id {0} is not in the vocabulary")]
    BadToken(i32),
    /// A grammar that llama.cpp cannot compile.
    #[error("the grammar does not compile ({0}); llama.cpp's log (-vv) says where")]
    Grammar(String),
    /// `decode` failed.
    #[error("llama.cpp decode failed: {0}")]
    Decode(String),
    /// The draft model for speculative decoding cannot draft for this model.
    #[error("the draft model cannot be used: {0}")]
    DraftModel(String),
    /// The engine's thread is gone.
    #[error("the engine thread stopped")]
    EngineGone,
}
