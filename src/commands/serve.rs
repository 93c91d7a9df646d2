//! `rein serve`: the loaded model behind an OpenAI-compatible HTTP API.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use rein_format::ToolFormat;
use rein_llama::{Engine, LocalModel};
use rein_models::GgufInfo;
use rein_serve::{AppState, ServedModel, ServerLimits};

/// Arguments of `rein serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// The address to listen on (loopback unless you mean otherwise).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// The port (0 picks a free one; the address is printed).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The environment variable holding the bearer key clients must send.
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Requests generating at once; more wait in a fair queue.
    #[arg(long, default_value_t = 4)]
    pub sessions: u32,
    /// Tokens one request may use, prompt and reply (default: the model's, at most 4096).
    #[arg(long)]
    pub ctx: Option<u32>,
    /// Seconds a request waits for a session before a 503 with Retry-After.
    #[arg(long, default_value_t = 120)]
    pub queue_timeout: u64,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 8 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, default_value_t = 10)]
    pub header_timeout: u64,
    /// Seconds a client may take to send a request's body.
    #[arg(long, default_value_t = 30)]
    pub body_timeout: u64,
    /// Open connections at most (more wait until one closes).
    #[arg(long, default_value_t = 64)]
    pub max_connections: usize,
    /// Most tokens a reply may have, whatever a request's max_tokens says.
    #[arg(long, default_value_t = 4096)]
    pub max_tokens: u32,
    /// native (the template renders the tools, when it can) or emulated.
    #[arg(long, default_value = "native", value_parser = super::choices::TOOL_FORMATS)]
    pub tool_format: String,
    /// The model name clients see (default: the --model value).
    #[arg(long)]
    pub name: Option<String>,
    /// Do not show an example of several calls in one reply in prompts that offer tools
    /// with parallel calls (small models otherwise make one call where several are
    /// needed).
    #[arg(long)]
    pub no_call_example: bool,
}

/// Runs `rein serve` until Ctrl-C.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let tool_format: ToolFormat = args.tool_format.parse()?;
    let api_key = super::api_key_from_env(args.api_key_env.as_deref())?;
    if !args.host.is_loopback() && api_key.is_none() {
        tracing::warn!(
            "listening on {} without --api-key-env: anyone who can reach this address can use the model",
            args.host
        );
    }
    let path = args.model.resolve()?;
    let info = GgufInfo::read(&path)?;
    let sessions = args.sessions.max(1);
    let per_request = args
        .ctx
        .unwrap_or_else(|| super::default_ctx(&info))
        .max(64);
    let plan = args.model.plan(&info, per_request, sessions)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let mut config = args.model.engine_config_for(path, &plan);
        config.queue_timeout = Duration::from_secs(args.queue_timeout);
        config.prompt_cache =
            super::prompt_cache::config(!args.model.no_prompt_cache, Some(&args.model.model));
        let engine = Engine::load(config).await?;
        let name = args
            .name
            .clone()
            .unwrap_or_else(|| args.model.model.clone());
        let model = ServedModel::new(LocalModel::new(engine)?, name, tool_format, per_request)
            .with_call_example(!args.no_call_example);
        let limits = ServerLimits {
            header_timeout: Duration::from_secs(args.header_timeout.max(1)),
            body_timeout: Duration::from_secs(args.body_timeout.max(1)),
            max_connections: args.max_connections.max(1),
            max_reply_tokens: args.max_tokens.max(1),
        };
        let state =
            Arc::new(AppState::new(model, api_key, args.max_body_bytes).with_limits(limits));
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(args.host, args.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
        let address = listener.local_addr()?;
        println!(
            "rein serve: listening on http://{address}/v1 ({} sessions of {per_request} tokens)",
            plan.request.sessions
        );
        rein_serve::serve_with_limits(listener, rein_serve::router(state), limits, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
        anyhow::Ok(())
    })
}
