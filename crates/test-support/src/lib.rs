//! Helpers shared by rein's tests: a backend that replays written replies (for tests
//! of the loop's logic, never in place of a real model) and the lock that keeps tests
//! which load a model from running at once (they use every core), while tests without
//! a model run in parallel. No dependency on llama.cpp, so any crate can use it.
#![deny(missing_docs)]

mod lock;
mod scripted;

pub use lock::{model_lock, ModelGuard};
pub use scripted::{ScriptedBackend, ScriptedReply, SeenTurn};
