//! One MCP server for the length of a run: started (or reached) and initialized
//! within its startup timeout, its tools listed, each call sent with a timeout and
//! cancelled through the protocol when the timeout passes. A server that dies is
//! started again once; after a second death its tools answer that it is gone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, JsonObject,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::Value;

use crate::config::{Launch, ServerConfig};
use crate::environment::server_environment;
use crate::error::ServerError;
use crate::process::{self, Watchdog};
use crate::server_log::ServerLog;

/// How long a server that failed to start may take to finish writing its standard
/// error before the reason is given.
const STDERR_DRAIN: std::time::Duration = std::time::Duration::from_millis(500);

/// A live connection: the MCP session and the watchdog of its process.
struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    _watchdog: Watchdog,
}

/// Where a server stands.
enum State {
    /// Connected; the number of the start (1 for the first, 2 after a restart).
    Live(Connection, u32),
    /// It died and could not be brought back (or died again): why.
    Gone(String),
    /// Shut down at the end of the run.
    Closed,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    /// The server answered with this `CallToolResult` (as JSON).
    Answered(Value),
    /// No answer: why, in one line, and whether it was the call timeout.
    Failed {
        /// Why.
        reason: String,
        /// The call timeout passed (and the call was cancelled).
        timed_out: bool,
    },
}

/// One server and its connection.
pub struct McpServer {
    config: ServerConfig,
    cwd: PathBuf,
    runtime: tokio::runtime::Handle,
    state: tokio::sync::Mutex<State>,
    log: Arc<Mutex<ServerLog>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("McpServer")
            .field("name", &self.config.name)
            .finish()
    }
}

impl McpServer {
    /// Starts the server of `config` in `cwd` and lists its tools. Must be called
    /// within a Tokio runtime, whose handle later calls use.
    pub async fn start(
        config: ServerConfig,
        cwd: &Path,
    ) -> Result<(Arc<Self>, Vec<rmcp::model::Tool>), ServerError> {
        let log = Arc::new(Mutex::new(ServerLog::default()));
        let (connection, tools) =
            connect(&config, cwd, &log)
                .await
                .map_err(|reason| ServerError {
                    server: config.name.clone(),
                    reason,
                })?;
        let server = Arc::new(Self {
            config,
            cwd: cwd.to_path_buf(),
            runtime: tokio::runtime::Handle::current(),
            state: tokio::sync::Mutex::new(State::Live(connection, 1)),
            log,
        });
        Ok((server, tools))
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Its declaration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Calls the tool the server calls `tool` with `arguments`.
    pub async fn call(&self, tool: &str, arguments: JsonObject) -> CallResult {
        let (peer, start) = {
            let state = self.state.lock().await;
            match &*state {
                State::Live(connection, start) => (connection.service.peer().clone(), *start),
                State::Gone(reason) => {
                    return failed(format!(
                        "the MCP server `{}` is not running ({reason}); its tools cannot be used in this run",
                        self.config.name
                    ))
                }
                State::Closed => {
                    return failed(format!("the MCP server `{}` was shut down", self.config.name))
                }
            }
        };
        let request = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let timeout = self.config.call_timeout;
        // Dropping the request on timeout sends `notifications/cancelled`.
        match tokio::time::timeout(timeout, peer.call_tool(request)).await {
            Ok(Ok(result)) => match serde_json::to_value(&result) {
                Ok(value) => CallResult::Answered(value),
                Err(error) => failed(format!("the server's result could not be read: {error}")),
            },
            Ok(Err(ServiceError::McpError(error))) => failed(format!(
                "the server refused the call: {}",
                one_line(&error.message)
            )),
            Ok(Err(error)) if lost_connection(&error) => self.after_death(&error, start).await,
            Ok(Err(error)) => failed(format!("the call failed: {}", one_line(&error.to_string()))),
            Err(_) => CallResult::Failed {
                reason: format!(
                    "`{}` on the MCP server `{}` did not finish within {} s and was cancelled",
                    tool,
                    self.config.name,
                    timeout.as_secs()
                ),
                timed_out: true,
            },
        }
    }

    /// [`McpServer::call`] from a thread outside the runtime (a tool call on a
    /// blocking thread).
    pub fn call_blocking(&self, tool: &str, arguments: JsonObject) -> CallResult {
        self.runtime.block_on(self.call(tool, arguments))
    }

    /// The connection of start number `start` broke during a call: the server is
    /// started again once; the call itself is not repeated (it may have had effects).
    /// Calls in flight on the same connection find it started again already.
    async fn after_death(&self, error: &ServiceError, start: u32) -> CallResult {
        let mut state = self.state.lock().await;
        let last_words = self.last_log_line();
        let cause = format!(
            "the MCP server `{}` stopped during the call ({}{})",
            self.config.name,
            one_line(&error.to_string()),
            last_words
        );
        match &*state {
            State::Live(_, current) if *current != start => {
                return failed(format!(
                    "{cause}; it has been started again since: call again if the call is safe to repeat"
                ))
            }
            State::Live(_, current) if *current > 1 => {
                *state = State::Gone("it stopped twice".to_string());
                return failed(format!(
                    "{cause}; it stopped before, so it is not started again"
                ));
            }
            State::Live(..) => {}
            State::Gone(_) | State::Closed => return failed(cause),
        }
        match connect(&self.config, &self.cwd, &self.log).await {
            Ok((connection, _)) => {
                *state = State::Live(connection, start + 1);
                failed(format!(
                    "{cause}; it was started again: call again if the call is safe to repeat"
                ))
            }
            Err(reason) => {
                *state = State::Gone(format!("it could not be started again: {reason}"));
                failed(format!("{cause}; starting it again failed: {reason}"))
            }
        }
    }

    /// Ends the connection (and the server process with its group).
    pub async fn shutdown(&self) {
        let previous = std::mem::replace(&mut *self.state.lock().await, State::Closed);
        if let State::Live(connection, _) = previous {
            let Connection { service, _watchdog } = connection;
            let _ = service.cancel().await;
            drop(_watchdog);
        }
    }

    /// Takes what the server wrote on standard error since the last take, with the
    /// count of lines dropped for space.
    pub fn take_log(&self) -> (Vec<String>, usize) {
        self.log
            .lock()
            .map(|mut log| log.take())
            .unwrap_or_default()
    }

    fn last_log_line(&self) -> String {
        last_line(&self.log)
    }
}

fn failed(reason: String) -> CallResult {
    CallResult::Failed {
        reason,
        timed_out: false,
    }
}

/// Whether `error` means the server or its transport is gone.
fn lost_connection(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. }
    )
}

/// `; its last words: LINE` for the server's last words ([`ServerLog::last_words`]), or nothing.
fn last_line(log: &Arc<Mutex<ServerLog>>) -> String {
    log.lock()
        .ok()
        .and_then(|log| {
            log.last_words()
                .map(|line| format!("; its last words: {}", one_line(line)))
        })
        .unwrap_or_default()
}

/// `text` on one line, at most 300 characters: a reason in a one-line message.
fn one_line(text: &str) -> String {
    crate::result_text::one_line(text)
        .chars()
        .take(300)
        .collect()
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("rein", env!("CARGO_PKG_VERSION")),
    )
}

/// Starts or reaches the server, initializes it and lists its tools, all within
/// the startup timeout. The error is one line.
async fn connect(
    config: &ServerConfig,
    cwd: &Path,
    log: &Arc<Mutex<ServerLog>>,
) -> Result<(Connection, Vec<rmcp::model::Tool>), String> {
    let limit = config.startup_timeout;
    let started = tokio::time::Instant::now();
    let (service, watchdog) = match &config.launch {
        Launch::Command { program, args, env } => {
            let environment = server_environment(env, |name| std::env::var(name).ok());
            let process::Started {
                transport,
                watchdog,
                stderr_read,
            } = process::start(program, args, &environment, cwd, Arc::clone(log))?;
            let failure = match tokio::time::timeout(limit, client_info().serve(transport)).await {
                Ok(Ok(service)) => Ok(service),
                Err(_) => Err(format!(
                    "did not answer `initialize` within {} s",
                    limit.as_secs()
                )),
                Ok(Err(error)) => Err(format!(
                    "`initialize` failed: {}",
                    one_line(&error.to_string())
                )),
            };
            let service = match failure {
                Ok(service) => service,
                Err(reason) => {
                    // A server that quit at once has said why on its standard error:
                    // read it to the end (briefly) before naming its last words.
                    if let Some(reading) = stderr_read {
                        let _ = tokio::time::timeout(STDERR_DRAIN, reading).await;
                    }
                    return Err(format!("{reason}{}", last_line(log)));
                }
            };
            (service, watchdog)
        }
        Launch::Url { url } => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            let service = tokio::time::timeout(limit, client_info().serve(transport))
                .await
                .map_err(|_| {
                    format!(
                        "{url} did not answer `initialize` within {} s",
                        limit.as_secs()
                    )
                })?
                .map_err(|error| {
                    format!(
                        "{url}: `initialize` failed: {}",
                        one_line(&error.to_string())
                    )
                })?;
            (service, Watchdog::none())
        }
    };
    let remaining = limit.saturating_sub(started.elapsed());
    let tools = tokio::time::timeout(remaining, service.list_all_tools())
        .await
        .map_err(|_| {
            format!(
                "did not list its tools within {} s of starting",
                limit.as_secs()
            )
        })?
        .map_err(|error| {
            format!(
                "listing its tools failed: {}{}",
                one_line(&error.to_string()),
                last_line(log)
            )
        })?;
    Ok((
        Connection {
            service,
            _watchdog: watchdog,
        },
        tools,
    ))
}
