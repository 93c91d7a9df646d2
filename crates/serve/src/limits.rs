//! Limits that hold under hostile clients: how long a client may take to send its
//! headers and its body, how many connections may be open, and how long a reply may
//! be whatever a request asks.

use std::time::Duration;

/// The server's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Longest a client may take to send a request's headers; a connection that takes
    /// longer is closed (a client sending one byte a second holds nothing).
    pub header_timeout: Duration,
    /// Longest a client may take to send a request's body once its headers arrived;
    /// then the request is refused with 408.
    pub body_timeout: Duration,
    /// Open connections at most; further clients wait in the listen backlog until one
    /// closes.
    pub max_connections: usize,
    /// Most tokens one reply may have, whatever `max_tokens` a request asks.
    pub max_reply_tokens: u32,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 64,
            max_reply_tokens: 4096,
        }
    }
}
