//! `rein run`: an agent works on a task in a workspace directory with the built-in
//! tools, until it answers or a budget ends it; the answer and stop reason are printed.
//! The model runs in this process, or behind an OpenAI-compatible server (`--backend openai`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use rein_agent::{Agent, ApprovalPolicy, Profile, RunConfig};
use rein_engine::Backend;
use rein_format::DescriptionStyle;
use rein_llama::{Engine, LocalBackend};
use rein_mcp::Disclosure;
use rein_protocol::{RunResult, Sinks, StopReason, TraceWriter};
use rein_remote::{RemoteBackend, RemoteSettings};
use rein_tools::{Registry, SandboxMode, ToolLimits, Workspace};

/// Arguments of `rein run`.
#[derive(Args)]
pub struct RunArgs {
    /// The task (with -i, the session's first).
    #[arg(required_unless_present_any = ["resume", "interactive"])]
    pub task: Option<String>,
    /// An agent session: after each answer, the next task (a follow-up) is read from
    /// the terminal and worked on with the conversation and the model's cache kept;
    /// /undo, /reset, /help; Ctrl-C stops the task under way, Ctrl-D leaves.
    #[arg(short, long, conflicts_with = "resume")]
    pub interactive: bool,
    /// Which calls wait for your approval before they run: never, writes (file
    /// changes and shell commands), shell, or always. Each is shown (the command, or
    /// the change as a diff) and answered y, n (the model is told; nothing changes) or
    /// e (edit it). Answers are read from standard input.
    #[arg(long, default_value = "never", value_parser = super::choices::typed::<ApprovalPolicy>(&super::choices::APPROVALS))]
    pub approve: ApprovalPolicy,
    /// Go on with the run this trace recorded, in the same workspace, from where it
    /// stopped (Ctrl-C, a budget or an error); its task, with fresh budgets.
    #[arg(long, value_name = "TRACE", conflicts_with = "task")]
    pub resume: Option<PathBuf>,
    /// The workspace: every file path the tools touch stays inside it.
    #[arg(long, default_value = ".")]
    pub workdir: PathBuf,
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// The harness profile (docs/profiles.md).
    #[arg(long, default_value = "full", value_parser = super::choices::PROFILES)]
    pub profile: String,
    /// Most model turns.
    #[arg(long, default_value_t = 30)]
    pub max_turns: u32,
    /// Most generated tokens over the run.
    #[arg(long, default_value_t = 16_384)]
    pub max_tokens: u64,
    /// Most seconds for the run.
    #[arg(long, default_value_t = 900)]
    pub timeout: u64,
    /// A reply's token allowance (doubled, up to 4096, when a call is cut off).
    #[arg(long, default_value_t = 1024)]
    pub reply_tokens: u32,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.2)]
    pub temperature: f32,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Tool descriptions for templates without tool support.
    #[arg(long, default_value = "full", value_parser = super::choices::DESCRIPTIONS)]
    pub describe: String,
    /// Do not hold the answer for verification after source edits.
    #[arg(long)]
    pub no_verify_guard: bool,
    /// At most one call per reply.
    #[arg(long)]
    pub no_parallel_tool_calls: bool,
    /// native (the template renders the tools, when it can) or emulated (tools taught
    /// in the system prompt in the model's own call syntax).
    #[arg(long, default_value = "native", value_parser = super::choices::TOOL_FORMATS)]
    pub tool_format: String,
    /// Seconds a shell command may run.
    #[arg(long, default_value_t = 60)]
    pub shell_timeout: u64,
    /// How shell commands are confined: workspace (writes only in the workspace and a
    /// private temporary directory, no network), strict (also reads only the system's
    /// and the toolchains' directories) or off.
    #[arg(long, env = "REIN_SANDBOX", default_value = "workspace", value_parser = super::choices::typed::<SandboxMode>(&super::choices::SANDBOX_MODES))]
    pub sandbox: SandboxMode,
    /// Where the JSONL trace goes (default: the cache's rein/traces directory).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Context size in tokens (default: the model's, at most 8192).
    #[arg(long)]
    pub ctx: Option<u32>,
    /// Print one JSON object with the result as the last line.
    #[arg(long)]
    pub json: bool,
    /// local (the model in this process) or openai (an OpenAI-compatible server at
    /// --base-url; --model names the model there).
    #[arg(long, default_value = "local", value_parser = super::choices::BACKENDS)]
    pub backend: String,
    /// The OpenAI-compatible API base for --backend openai (`http://host:8080/v1`).
    #[arg(long)]
    pub base_url: Option<String>,
    /// The environment variable holding the remote server's bearer key.
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// The remote model's tokenizer.json, for token counts when the server reports none.
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// A run setting by name, repeatable: describe, temperature, top_p,
    /// repeat_penalty, call_example, wrapper_grammar, answer_guards, result_lines,
    /// verification_guard, parallel_calls, reply_tokens, retry_heat,
    /// grounding_check, stepwise, workspace_files, no_blank, focused_answer,
    /// focused_edit, result_context, call_or_answer, call_intent, tool_preview,
    /// query_data, replace_in_files, rules, rule.NAME (e.g. `--set call_example=off`).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = super::parse_setting)]
    pub settings: Vec<(String, String)>,
    /// Keep no record for `rein undo` (the workspace's files are saved before each run
    /// and the pre-images of the files it changes kept; what git ignores is left out).
    #[arg(long)]
    pub no_undo: bool,
    /// MCP servers whose tools the run may use.
    #[command(flatten)]
    pub mcp: super::mcp::McpArgs,
}

/// Runs `rein run`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let config = run_config(&args)?;
    let start = match (&args.resume, &args.task) {
        (Some(trace), _) => Start::Resume(super::resume::earlier_run(trace)?),
        (None, Some(task)) => Start::Task(task.clone()),
        // A session reads its first task at its prompt.
        (None, None) if args.interactive => Start::Task(String::new()),
        (None, None) => anyhow::bail!("give a task, or --resume TRACE"),
    };
    let workspace = Workspace::new(
        &args.workdir,
        ToolLimits {
            shell_timeout: Duration::from_secs(args.shell_timeout.max(1)),
            sandbox: args.sandbox,
            ..ToolLimits::default()
        },
    )
    .with_context(|| format!("--workdir {}", args.workdir.display()))?;
    let trace_path = match &args.trace {
        Some(path) => path.clone(),
        None => default_trace_path()?,
    };
    let trace = TraceWriter::create(&trace_path)?;
    let servers = (
        args.mcp.servers(Some(workspace.root()))?,
        args.mcp.mcp_disclosure,
        args.ctx.unwrap_or(8192) as usize,
    );
    if args.interactive {
        return super::run_session::run(&args, workspace, config, (trace, &trace_path), servers);
    }
    let id = super::undo::run_id(&trace_path);
    let record = if args.no_undo {
        None
    } else {
        super::undo::start_record(workspace.root(), &id)
    };
    let result = execute(&args, workspace, config, start, trace, servers);
    // The record is finished whatever the run's outcome: a failed run may have written.
    let changed = record.and_then(|(recorder, dir)| super::undo::finish_record(recorder, &dir));
    let result = result?;
    print_result(&result, args.json)?;
    if let Some(record) = changed {
        eprintln!(
            "[{} file(s) changed; `rein undo {id}` puts them back]",
            record.changes.len()
        );
    }
    if result.stop_reason == StopReason::Interrupted {
        eprintln!(
            "[stopped; `rein run --resume {}` goes on from here]",
            trace_path.display()
        );
        std::process::exit(INTERRUPTED_EXIT);
    }
    Ok(())
}

/// The exit status of a run the user stopped with Ctrl-C (128 + SIGINT, as shells do).
pub(super) const INTERRUPTED_EXIT: i32 = 130;

/// What a run starts from: a task, or an earlier run's conversation.
enum Start {
    Task(String),
    Resume(super::resume::EarlierRun),
}

/// The MCP servers of a run, how their tools are shown, and the context size.
pub(super) type Servers = (Vec<rein_mcp::ServerConfig>, Disclosure, usize);

/// Runs the agent on the backend `args` name.
fn execute(
    args: &RunArgs,
    workspace: Workspace,
    config: RunConfig,
    start: Start,
    trace: TraceWriter,
    servers: Servers,
) -> anyhow::Result<RunResult> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = match args.backend.as_str() {
        "local" => runtime.block_on(async {
            let (_engine, backend) = local_backend(args).await?;
            run_agent(
                backend,
                workspace,
                (config, args.approve),
                start,
                trace,
                servers,
            )
            .await
        }),
        "openai" => {
            let backend = RemoteBackend::new(remote_settings(args)?)?;
            runtime.block_on(run_agent(
                backend,
                workspace,
                (config, args.approve),
                start,
                trace,
                servers,
            ))
        }
        other => anyhow::bail!("--backend must be local or openai, got `{other}`"),
    };
    // A request stopped by Ctrl-C may still wait in a blocking thread (a remote reply):
    // the run is over, so nothing waits for it.
    runtime.shutdown_background();
    result
}

/// The model of `args` loaded in this process, and a backend over it (the engine
/// lives as long as it is held).
pub(super) async fn local_backend(args: &RunArgs) -> anyhow::Result<(Engine, LocalBackend)> {
    let path = args.model.resolve()?;
    let mut engine_config = args
        .model
        .engine_config(path, Some(args.ctx.unwrap_or(8192)), 1)?;
    engine_config.prompt_cache =
        super::prompt_cache::config(!args.model.no_prompt_cache, Some(&args.model.model));
    let engine = Engine::load(engine_config).await?;
    let backend = LocalBackend::new(&engine).await?;
    Ok((engine, backend))
}

async fn run_agent<B: Backend>(
    backend: B,
    workspace: Workspace,
    (config, approval): (RunConfig, ApprovalPolicy),
    start: Start,
    mut trace: TraceWriter,
    (servers, disclosure, context_tokens): Servers,
) -> anyhow::Result<RunResult> {
    let hub = super::mcp::start(servers, workspace.root(), &mut trace).await;
    let mut registry = Registry::builtin();
    hub.extend_for(&mut registry, disclosure, context_tokens);
    let result = match Agent::new(backend, workspace, &registry, config) {
        Ok(mut agent) => {
            agent.stop_when(stop_on_ctrl_c());
            agent.approve_with(
                approval,
                Arc::new(super::approve::TerminalApprover::new(None)),
            );
            let mut progress = crate::progress::StepPrinter::stderr();
            let mut sinks = Sinks::new().with(&mut trace).with(&mut progress);
            Ok(match start {
                Start::Task(task) => agent.run_with(&task, &mut sinks).await,
                Start::Resume(earlier) => {
                    let from = earlier.trace.display().to_string();
                    agent
                        .resume_with(&earlier.task, earlier.history, &from, &mut sinks)
                        .await
                }
            })
        }
        Err(error) => Err(error.into()),
    };
    hub.shutdown_reported(&mut trace).await;
    result
}

/// A signal that turns true at the first Ctrl-C; a second one quits at once.
fn stop_on_ctrl_c() -> tokio::sync::watch::Receiver<bool> {
    let (sender, receiver) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        eprintln!("\n[stopping: the calls under way finish, then the run ends; Ctrl-C again quits at once]");
        let _ = sender.send(true);
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(INTERRUPTED_EXIT);
        }
    });
    receiver
}

/// The remote server of `--backend openai`.
pub(super) fn remote_settings(args: &RunArgs) -> anyhow::Result<RemoteSettings> {
    let base_url = args
        .base_url
        .clone()
        .context("--backend openai needs --base-url (e.g. http://127.0.0.1:8080/v1)")?;
    let mut settings = RemoteSettings::new(base_url, args.model.model.clone());
    settings.api_key = super::api_key_from_env(args.api_key_env.as_deref())?;
    settings.tokenizer = args.tokenizer.clone();
    settings.context_tokens = args.ctx.map(|c| c as usize);
    settings.timeout = Duration::from_secs(args.timeout.max(1));
    Ok(settings)
}

fn run_config(args: &RunArgs) -> anyhow::Result<RunConfig> {
    if !(0.0..=5.0).contains(&args.temperature) {
        anyhow::bail!(
            "--temperature must be between 0 and 5, got {}",
            args.temperature
        );
    }
    let profile: Profile = args.profile.parse()?;
    let mut config = RunConfig::new(profile);
    config.max_turns = args.max_turns.max(1);
    config.max_tokens = args.max_tokens.max(1);
    config.wall_clock = Duration::from_secs(args.timeout.max(1));
    config.reply_tokens = args.reply_tokens.clamp(16, 4096);
    config.temperature = args.temperature;
    config.seed = args.seed;
    config.verification_guard = profile == Profile::Full && !args.no_verify_guard;
    config.parallel_calls = !args.no_parallel_tool_calls;
    config.tool_format = args.tool_format.parse()?;
    config.describe = match args.describe.as_str() {
        "full" => DescriptionStyle::Full,
        "compact" => DescriptionStyle::Compact,
        other => anyhow::bail!("--describe must be full or compact, got `{other}`"),
    };
    for (key, value) in &args.settings {
        config
            .set(key, value)
            .with_context(|| format!("--set {key}={value}"))?;
    }
    Ok(config)
}

/// `run-<unix ms>-<pid>.jsonl` under the user's cache directory.
fn default_trace_path() -> anyhow::Result<PathBuf> {
    let models = rein_models::ModelCache::from_env()?;
    let base = std::env::var_os("REIN_TRACE_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| models.dir().parent().map(|p| p.join("traces")))
        .context("no directory for traces; pass --trace")?;
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    Ok(base.join(format!("run-{millis}-{}.jsonl", std::process::id())))
}

fn print_result(result: &RunResult, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(result)?);
        return Ok(());
    }
    if let Some(answer) = &result.answer {
        println!("{answer}");
    }
    eprintln!(
        "[{}: {} turns, {} tool calls ({} failed), {} ms; trace {}]",
        stop_text(result),
        result.turns,
        result.tool_calls,
        result.tool_errors,
        result.wall_ms,
        result.trace.as_deref().unwrap_or("-"),
    );
    Ok(())
}

/// Why a run stopped, with the detail when there is one (`backend_error (…)`).
pub(super) fn stop_text(result: &RunResult) -> String {
    match &result.detail {
        Some(detail) => format!("{} ({detail})", result.stop_reason.as_str()),
        None => result.stop_reason.as_str().to_string(),
    }
}
