//! rein's engine over llama.cpp (through `llama-cpp-2`): every llama type stays in
//! this crate. One owner thread per loaded model holds the model and its context;
//! callers use an async [`Engine`] handle and [`Session`]s, each with its own KV
//! sequence whose prefix is reused across turns. [`LocalModel`] and [`LocalBackend`]
//! implement `rein-engine`'s traits over it.
#![deny(missing_docs)]

mod backend;
mod draft_model;
mod engine;
mod error;
mod generation;
#[cfg(feature = "llguidance")]
mod guidance;
mod kv;
#[cfg_attr(not(feature = "llguidance"), allow(dead_code))]
mod lark;
mod literal;
mod local;
mod lookup;
mod prompt_cache;
mod quantize;
mod repetition;
mod sampler;
mod slots;
mod stop;
mod teacher;
mod types;
mod utf8;
mod worker;

pub use backend::machine;
pub use engine::{Engine, GenerationStream, Session};
pub use error::EngineError;
pub use local::{backend_error, LocalBackend, LocalModel};
pub use prompt_cache::{
    clear_prompt_cache, list_prompt_cache, PromptCacheConfig, PromptCacheEntry,
};
pub use quantize::{quantize, QuantizeError, QuantizeTarget};
pub use rein_models::plan_request;
pub use rein_protocol::Grammar;
pub use teacher::{ForcedLogits, ForcedReader, ForcingModel};
pub use types::{
    ControlToken, EngineConfig, GenerateEvent, GenerateOutput, GenerateRequest, GrammarEngine,
    KvCacheType, ModelInfo, Prompt, SamplingParams, StopReason, TokenId,
};
