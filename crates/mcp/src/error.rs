//! What can go wrong with MCP server declarations and connections, each in one line.

use std::path::PathBuf;

/// A server declaration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A file is not valid TOML or has unknown keys.
    #[error("{origin}: {reason}")]
    Parse {
        /// The file.
        origin: String,
        /// What the parser said.
        reason: String,
    },
    /// A server table that says too little or too much.
    #[error("{origin}: MCP server `{name}`: {reason}")]
    Invalid {
        /// The file.
        origin: String,
        /// The server.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A name that cannot prefix tool names.
    #[error("`{name}` is not a usable MCP server name: use 1–24 letters, digits, `-` or `_`, without `__` and not starting or ending with `_`")]
    BadName {
        /// The name.
        name: String,
    },
    /// A `--mcp` value that cannot be read.
    #[error("--mcp `{value}`: {reason}")]
    BadFlag {
        /// The value.
        value: String,
        /// What is wrong.
        reason: String,
    },
}

/// A server that could not be started or reached.
#[derive(Debug, Clone, thiserror::Error)]
#[error("MCP server `{server}`: {reason}")]
pub struct ServerError {
    /// The server.
    pub server: String,
    /// Why, in one line.
    pub reason: String,
}
