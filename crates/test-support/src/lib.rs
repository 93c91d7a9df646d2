//! Helpers shared by rein's tests: a backend that replays written replies (for tests
//! of the loop's logic, never in place of a real model), the lock that keeps tests
//! which load a model from running at once (they use every core), while tests without
//! a model run in parallel, and where the MCP test servers are. No dependency on llama.cpp, so any crate can use it.
#![deny(missing_docs)]

mod lock;
mod mcp_servers;
mod scripted;

pub use lock::{model_lock, ModelGuard};
pub use mcp_servers::{mcp_server_script, mcp_servers_dir, processes_with};
pub use scripted::{ScriptedBackend, ScriptedReply, SeenTurn};
