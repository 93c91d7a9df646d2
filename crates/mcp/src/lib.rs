//! Model Context Protocol tool sources: servers declared in `rein.toml` or with
//! `--mcp`, started as child processes (or reached over Streamable HTTP) on `rmcp`,
//! their tools offered to the model as `server__tool` beside the built-ins, with the
//! same validation, scheduling, bounds and untrusted-data wrapping.
#![deny(missing_docs)]

pub mod config;
mod environment;
mod error;
mod hub;
mod process;
mod result_text;
mod server;
mod server_log;
mod tool;
mod tool_search;

pub use config::{Launch, ServerConfig};
pub use environment::{server_environment, PASSED_THROUGH};
pub use error::{ConfigError, ServerError};
pub use hub::{Disclosure, McpHub, DEFER_COUNT, DEFER_SHARE};
pub use result_text::render as render_result;
pub use server::{CallResult, McpServer};
pub use server_log::ServerLog;
pub use tool::{offered_name, McpTool, SEPARATOR};
pub use tool_search::{ToolSearch, TOOL_SEARCH};
