//! An MCP server on rmcp's server side for rein's tests (stdio): 100 plain tools, a
//! slow one that honours cancellation, one that crashes on a given argument, results
//! of every kind, and the hostile names and schemas of `hostile.rs`. Its tool list
//! comes in pages of 40, as a large server's may. With `--unreadable` it also lists a
//! tool whose schema nests deeper than a JSON reader's recursion limit.

mod catalog;
mod hostile;

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};

/// Tools per page of `tools/list`.
const PAGE: usize = 40;

/// What every line this server writes to its standard error starts with.
const LOG: &str = "rein-mcp-test-server:";

struct TestServer {
    tools: Vec<Tool>,
    /// The names of the hostile tools, which answer with the arguments they got.
    hostile: HashSet<String>,
}

fn special_tools() -> Vec<Tool> {
    let object = |properties: Value, required: Value| {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), properties);
        schema.insert("required".into(), required);
        std::sync::Arc::new(schema)
    };
    vec![
        Tool::new(
            "slow_echo",
            "Echoes text after waiting the given seconds; a cancelled call stops waiting.",
            object(
                json!({"text": {"type": "string"}, "seconds": {"type": "number"}}),
                json!(["text", "seconds"]),
            ),
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new(
            "crash_on",
            "Answers for any word but `boom`, on which the server exits during the call.",
            object(json!({"word": {"type": "string"}}), json!(["word"])),
        ),
        Tool::new(
            "pid",
            "The server's process id.",
            object(json!({}), json!([])),
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new(
            "structured_only",
            "Answers with structured content and no text.",
            object(json!({}), json!([])),
        ),
        Tool::new(
            "always_fails",
            "Answers with a tool error.",
            object(json!({}), json!([])),
        ),
        Tool::new(
            "picture",
            "Answers with a PNG image.",
            object(json!({}), json!([])),
        ),
    ]
}

impl TestServer {
    fn new(unreadable: bool) -> Self {
        let mut hostile = hostile::tools();
        if unreadable {
            hostile.push(hostile::unreadable());
        }
        let names = hostile.iter().map(|tool| tool.name.to_string()).collect();
        let mut tools = catalog::tools();
        tools.extend(special_tools());
        tools.extend(hostile);
        Self {
            tools,
            hostile: names,
        }
    }

    async fn run(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let text = |text: String| CallToolResult::success(vec![ContentBlock::text(text)]);
        if let Some(answer) = catalog::answer(name, &arguments) {
            return text(answer);
        }
        if self.hostile.contains(name) {
            return text(format!("{name} got {}", Value::Object(arguments)));
        }
        let string = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match name {
            "slow_echo" => {
                let seconds = arguments.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 600.0))) => {
                        text(format!("echo: {}", string("text")))
                    }
                    () = context.ct.cancelled() => {
                        eprintln!("{LOG} slow_echo cancelled");
                        CallToolResult::error(vec![ContentBlock::text("cancelled")])
                    }
                }
            }
            "crash_on" if string("word") == "boom" => {
                eprintln!("{LOG} crash_on got boom, exiting");
                std::process::exit(3)
            }
            "crash_on" => text(format!("survived {}", string("word"))),
            "pid" => text(format!("pid {}", std::process::id())),
            "structured_only" => {
                let mut result = CallToolResult::structured(
                    json!({"status": "green", "checks": {"passed": 12, "failed": 0}}),
                );
                result.content.clear();
                result
            }
            "always_fails" => CallToolResult::error(vec![ContentBlock::text(
                "the backing store is read-only today",
            )]),
            // A 1×1 PNG.
            "picture" => CallToolResult::success(vec![ContentBlock::image(
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
                "image/png",
            )]),
            _ => CallToolResult::error(vec![ContentBlock::text(format!("no tool {name}"))]),
        }
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("rein-mcp-test-server", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = match request.and_then(|request| request.cursor) {
            Some(cursor) => cursor
                .parse()
                .map_err(|_| ErrorData::invalid_params(format!("bad cursor {cursor}"), None))?,
            None => 0,
        };
        let end = (start + PAGE).min(self.tools.len());
        let mut page = ListToolsResult::with_all_items(self.tools[start.min(end)..end].to_vec());
        page.next_cursor = (end < self.tools.len()).then(|| end.to_string());
        Ok(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        Ok(self.run(&request.name, arguments, context).await.into())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        eprintln!("{LOG} started as pid {}", std::process::id());
        let unreadable = std::env::args().any(|arg| arg == "--unreadable");
        let running = TestServer::new(unreadable)
            .serve(rmcp::transport::stdio())
            .await?;
        running.waiting().await?;
        Ok(())
    })
}
