//! rein's end-to-end tests: the engine and the CLI on the real tiny model.
//!
//! The tiny model must be in the model cache (`rein models pull tiny`; the README's
//! test command does it).

mod chat_session;
mod cli;
mod concurrency;
mod content_tokens;
mod engine;
mod eval;
mod family_grammars;
#[cfg(feature = "llguidance")]
mod forced_tokens;
mod gguf_tokenizer;
mod mcp;
mod openai_client;
mod prompt_cache;
mod quant_diff;
mod run;
mod run_approval;
mod run_resume;
mod run_session;
mod serve;
mod serve_limits;
mod serve_wrapped;
mod speculative;
mod support;
mod tool_calls;
