//! The MCP servers of `rein run` and `rein eval`: `--mcp` flags and `rein.toml`
//! files (the user's configuration directory, then the workspace), started for the
//! run, their start and standard error written to the trace, one line each on the
//! terminal for what started and what did not.

use std::path::{Path, PathBuf};

use clap::Args;
use rein_mcp::{Disclosure, McpHub, ServerConfig};
use rein_protocol::{RunEvent, TraceWriter};

/// The MCP options of a command that runs agents.
#[derive(Args, Debug, Clone, Default)]
pub struct McpArgs {
    /// An MCP server for the run, repeatable: `NAME=COMMAND ARG…` (split like a
    /// shell command line) or `NAME=http://host:port/mcp`. Its tools are offered as
    /// `NAME__tool`.
    #[arg(long = "mcp", value_name = "NAME=COMMAND ARG…")]
    pub servers: Vec<String>,
    /// Do not read MCP servers from `rein.toml` files (only `--mcp`).
    #[arg(long)]
    pub no_mcp_config: bool,
    /// How server tools are offered: auto (behind `tool_search` when listing them
    /// would take over a tenth of the context or they are more than 24), all, search.
    #[arg(long, default_value = "auto")]
    pub mcp_disclosure: Disclosure,
}

/// The user's configuration directory: `REIN_CONFIG_DIR`, else the platform's
/// (`~/.config/rein` on Linux).
pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("REIN_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|dir| dir.join("rein")),
    }
}

impl McpArgs {
    /// The servers declared for a run in `workspace`: the `rein.toml` files (unless
    /// `--no-mcp-config`), then the flags.
    pub fn servers(&self, workspace: Option<&Path>) -> anyhow::Result<Vec<ServerConfig>> {
        let (user, workspace) = if self.no_mcp_config {
            (None, None)
        } else {
            (user_config_dir(), workspace.map(Path::to_path_buf))
        };
        Ok(rein_mcp::config::gather(
            user.as_deref(),
            workspace.as_deref(),
            &self.servers,
        )?)
    }
}

/// Starts `servers` in `root`, writes each server's start to `trace` and says on
/// standard error what started.
pub async fn start(servers: Vec<ServerConfig>, root: &Path, trace: &mut TraceWriter) -> McpHub {
    let hub = McpHub::start_reported(servers, root, trace).await;
    for event in hub.start_events() {
        if let RunEvent::ToolServer {
            server,
            started,
            tools,
            detail,
        } = event
        {
            if *started {
                eprintln!("mcp: {server}: {tools} tools ({detail})");
            } else {
                eprintln!("mcp: {server} is not used: {detail}");
            }
        }
    }
    hub
}
