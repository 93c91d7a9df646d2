//! The MCP servers of one run: all started together, each that fails left out with
//! a one-line reason (its tools are not offered), the rest's tools ready to add to
//! the registry; shut down together at the end, their standard error kept for the
//! trace.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use rein_protocol::{EventSink, RunEvent};
use rein_tools::{Registry, Tool};

use crate::config::ServerConfig;
use crate::server::McpServer;
use crate::tool::McpTool;
use crate::tool_search::ToolSearch;

/// Above this share of the context, server tools are kept behind `tool_search`.
pub const DEFER_SHARE: f64 = 0.10;

/// Above this many server tools, they are kept behind `tool_search`.
pub const DEFER_COUNT: usize = 24;

/// How server tools are offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Disclosure {
    /// Behind `tool_search` when listing them all would take too much of the
    /// context ([`DEFER_SHARE`]) or they are many ([`DEFER_COUNT`]).
    #[default]
    Auto,
    /// Every one listed in the prompt.
    All,
    /// Behind `tool_search` always.
    Search,
}

impl std::str::FromStr for Disclosure {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(Self::Auto),
            "all" => Ok(Self::All),
            "search" => Ok(Self::Search),
            other => Err(format!("`{other}`: use auto, all or search")),
        }
    }
}

/// The servers of a run and their tools.
#[derive(Debug, Default)]
pub struct McpHub {
    servers: Vec<Arc<McpServer>>,
    tools: Vec<Arc<McpTool>>,
    events: Vec<RunEvent>,
}

impl McpHub {
    /// Starts every server of `configs` in `cwd` (the workspace) at once. Servers
    /// that fail are reported in [`McpHub::start_events`], as are tools whose
    /// schemas cannot be offered. Must be called within a Tokio runtime.
    pub async fn start(configs: Vec<ServerConfig>, cwd: &Path) -> Self {
        let started =
            futures_util::future::join_all(configs.into_iter().map(|config| async move {
                let described = config.describe();
                (
                    config.name.clone(),
                    described,
                    McpServer::start(config, cwd).await,
                )
            }))
            .await;
        let mut hub = Self::default();
        let mut taken = HashSet::new();
        for (name, described, outcome) in started {
            match outcome {
                Ok((server, definitions)) => {
                    let mut withdrawn = Vec::new();
                    let mut offered = 0;
                    for definition in &definitions {
                        match McpTool::new(&server, definition, &mut taken) {
                            Ok(tool) => {
                                hub.tools.push(Arc::new(tool));
                                offered += 1;
                            }
                            Err(reason) => withdrawn.push(reason),
                        }
                    }
                    let mut detail = described;
                    if !withdrawn.is_empty() {
                        detail.push_str(&format!("; not offered: {}", withdrawn.join("; ")));
                    }
                    hub.events.push(RunEvent::ToolServer {
                        server: name,
                        started: true,
                        tools: offered,
                        detail,
                    });
                    hub.servers.push(server);
                }
                Err(error) => hub.events.push(RunEvent::ToolServer {
                    server: name,
                    started: false,
                    tools: 0,
                    detail: error.reason,
                }),
            }
        }
        hub
    }

    /// [`McpHub::start`], each server's start told to `events` (the run's trace);
    /// no servers start nothing.
    pub async fn start_reported(
        configs: Vec<ServerConfig>,
        cwd: &Path,
        events: &mut dyn EventSink,
    ) -> Self {
        if configs.is_empty() {
            return Self::default();
        }
        let hub = Self::start(configs, cwd).await;
        for event in &hub.events {
            events.emit(event);
        }
        hub
    }

    /// [`McpHub::shutdown`], what the servers wrote on standard error told to
    /// `events` (the run's trace).
    pub async fn shutdown_reported(&self, events: &mut dyn EventSink) {
        for event in self.shutdown().await {
            events.emit(&event);
        }
    }

    /// What happened at the start: one event per server.
    pub fn start_events(&self) -> &[RunEvent] {
        &self.events
    }

    /// One line per server that is not running, with the reason.
    pub fn failures(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|event| match event {
                RunEvent::ToolServer {
                    server,
                    started: false,
                    detail,
                    ..
                } => Some(format!("MCP server `{server}` is not used: {detail}")),
                _ => None,
            })
            .collect()
    }

    /// The tools offered, in the servers' order.
    pub fn tools(&self) -> &[Arc<McpTool>] {
        &self.tools
    }

    /// `registry` with the servers' tools added after its own: listed, or kept out of
    /// the prompt behind `tool_search` when `disclosure` says so for a context of
    /// `context_tokens`. Returns whether they were deferred.
    pub fn extend_for(
        &self,
        registry: &mut Registry,
        disclosure: Disclosure,
        context_tokens: usize,
    ) -> bool {
        let defer = match disclosure {
            Disclosure::All => false,
            Disclosure::Search => !self.tools.is_empty(),
            Disclosure::Auto => self.too_many_for(context_tokens),
        };
        self.extend_with(
            registry,
            if defer {
                Disclosure::Search
            } else {
                Disclosure::All
            },
        );
        defer
    }

    fn extend_with(&self, registry: &mut Registry, disclosure: Disclosure) {
        let defer = disclosure == Disclosure::Search && !self.tools.is_empty();
        for tool in &self.tools {
            tool.set_deferred(defer);
            registry.add(Arc::clone(tool) as Arc<dyn Tool>);
        }
        if defer {
            let catalog = self.tools.iter().map(|tool| tool.spec()).collect();
            registry.add(Arc::new(ToolSearch::new(catalog)));
        }
    }

    /// About how many prompt tokens the servers' tool definitions take: a token for
    /// every four characters of their JSON (a safe side estimate for English text
    /// and JSON punctuation under the tokenizers rein runs).
    pub fn definition_tokens(&self) -> usize {
        self.tools
            .iter()
            .map(|tool| serde_json::to_string(&tool.spec()).map_or(0, |json| json.len()))
            .sum::<usize>()
            / 4
    }

    /// Whether listing every server tool would take more than [`DEFER_SHARE`] of a
    /// context of `context_tokens`, or more than [`DEFER_COUNT`] tools.
    pub fn too_many_for(&self, context_tokens: usize) -> bool {
        self.tools.len() > DEFER_COUNT
            || self.definition_tokens() as f64 > DEFER_SHARE * context_tokens as f64
    }

    /// The running servers.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// Ends every connection and process; returns each server's standard error
    /// since the start (for the trace).
    pub async fn shutdown(&self) -> Vec<RunEvent> {
        let mut logs = Vec::new();
        for server in &self.servers {
            server.shutdown().await;
            let (lines, dropped) = server.take_log();
            if !lines.is_empty() || dropped > 0 {
                logs.push(RunEvent::ServerLog {
                    server: server.name().to_string(),
                    lines,
                    dropped,
                });
            }
        }
        logs
    }
}
