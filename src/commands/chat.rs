//! `rein chat`: one prompt, rendered with the model's own chat template, answered with
//! the reply streamed to stdout; with `--tools`, answered under the tool-call grammar
//! and printed as checked calls.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use rein_format::{hermes, Family, ModelFormat, RenderContext, ToolChoice, ToolFormat, ToolSet};
use rein_llama::{Engine, GenerateRequest, Prompt, SamplingParams, StopReason};
use rein_protocol::{Message, ToolSpec};
use serde_json::json;

/// Arguments of `rein chat`.
#[derive(Args)]
pub struct ChatArgs {
    /// The prompt.
    pub prompt: String,
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// A system message.
    #[arg(long)]
    pub system: Option<String>,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.7)]
    pub temperature: f32,
    /// Sampling seed; the same seed and input give the same reply.
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    /// Most tokens in the reply.
    #[arg(long, default_value_t = 512)]
    pub max_tokens: u32,
    /// Context size in tokens (default: the model's, at most 4096).
    #[arg(long)]
    pub ctx: Option<u32>,
    /// A JSON file with an array of OpenAI-style tools the model may call.
    #[arg(long)]
    pub tools: Option<std::path::PathBuf>,
    /// auto, none, required, or a tool's name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// At most one call per reply.
    #[arg(long)]
    pub no_parallel_tool_calls: bool,
    /// native (the template renders the tools, when it can) or emulated (tools taught
    /// in the system prompt in the model's own call syntax).
    #[arg(long, default_value = "native")]
    pub tool_format: String,
    /// Print one JSON object as the last line: {"content": ..., "tool_calls": [...]}.
    #[arg(long)]
    pub json: bool,
}

/// Runs `rein chat`.
pub fn run(args: ChatArgs) -> anyhow::Result<()> {
    if !(0.0..=5.0).contains(&args.temperature) {
        anyhow::bail!(
            "--temperature must be between 0 and 5, got {}",
            args.temperature
        );
    }
    let tool_format: ToolFormat = args.tool_format.parse()?;
    let tools = load_tools(&args)?;
    let choice: ToolChoice = args.tool_choice.parse().unwrap_or_default();
    if let Some(tools) = &tools {
        tools.check_choice(&choice)?;
        for (name, report) in tools.reports() {
            for change in &report.changes {
                tracing::info!(tool = name, "schema changed: {change}");
            }
        }
    }
    let path = args.model.resolve()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(chat(args, path, tools, choice, tool_format))
        .context("chat failed")
}

fn load_tools(args: &ChatArgs) -> anyhow::Result<Option<ToolSet>> {
    let Some(file) = &args.tools else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read --tools {}", file.display()))?;
    let specs: Vec<ToolSpec> = serde_json::from_str(&text)
        .with_context(|| format!("--tools {}: expected a JSON array of {{\"type\": \"function\", \"function\": {{...}}}} objects", file.display()))?;
    Ok(Some(ToolSet::prepare(&specs)?))
}

async fn chat(
    args: ChatArgs,
    path: std::path::PathBuf,
    tools: Option<ToolSet>,
    choice: ToolChoice,
    tool_format: ToolFormat,
) -> anyhow::Result<()> {
    let config = args.model.engine_config(path, args.ctx, 1)?;
    let engine = Engine::load(config).await?;
    let info = engine.info();
    let format = ModelFormat::detect(info.chat_template.as_deref(), info.architecture())?;
    let native_tools = format.native_tools(tool_format);
    let ModelFormat { template, family } = format;
    let definitions = tools
        .as_ref()
        .map(ToolSet::definitions)
        .filter(|d| !d.is_empty());
    let mut system = args.system.clone();
    if let (Some(defs), false) = (&definitions, native_tools) {
        let taught = family.emulated_instructions(defs);
        system = Some(match system {
            Some(s) => format!("{s}\n\n{taught}"),
            None => taught,
        });
    }
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(Message::system(system));
    }
    messages.push(Message::user(args.prompt.clone()));
    let prompt = template.render(&RenderContext {
        messages: &messages,
        tools: definitions.as_deref().filter(|_| native_tools),
        add_generation_prompt: true,
        bos_token: &info.bos_token,
        eos_token: &info.eos_token,
    })?;
    let mut request = GenerateRequest::new(Prompt::Text(prompt));
    request.sampling = SamplingParams {
        temperature: args.temperature,
        seed: args.seed,
        ..SamplingParams::default()
    };
    request.max_tokens = args.max_tokens;
    request.grammar = tools
        .as_ref()
        .and_then(|t| family.call_grammar(t, &choice, !args.no_parallel_tool_calls));
    let mut session = engine.session().await?;
    let stream_text = tools.is_none() && !args.json;
    let stdout = std::io::stdout();
    let output = session
        .generate_stream(request)?
        .finish(|chunk| {
            if stream_text {
                let mut out = stdout.lock();
                let _ = out.write_all(chunk.as_bytes());
                let _ = out.flush();
            }
        })
        .await?;
    tracing::info!(
        stop = output.stop_reason.as_str(),
        prompt_tokens = output.prompt_tokens,
        completion_tokens = output.tokens.len(),
        prefill_ms = output.prefill_time.as_millis() as u64,
        decode_ms = output.decode_time.as_millis() as u64,
        "done"
    );
    if stream_text {
        println!();
        return Ok(());
    }
    tracing::debug!(raw = %output.text, "reply");
    let cut_off = matches!(
        output.stop_reason,
        StopReason::MaxTokens | StopReason::ContextFull
    );
    let calls_only = matches!(choice, ToolChoice::Required | ToolChoice::Named(_));
    let reply = match &tools {
        Some(tools) => checked_reply(family, tools, &output.text, cut_off, calls_only)?,
        None => json!({"content": output.text, "tool_calls": []}),
    };
    if args.json {
        println!("{reply}");
    } else {
        if let Some(content) = reply["content"].as_str() {
            println!("{content}");
        }
        for call in reply["tool_calls"].as_array().into_iter().flatten() {
            println!("{call}");
        }
    }
    Ok(())
}

/// Parses the reply's calls and checks each against its tool; arguments come back
/// with the tool's own property names.
fn checked_reply(
    family: Family,
    tools: &ToolSet,
    text: &str,
    cut_off: bool,
    calls_only: bool,
) -> anyhow::Result<serde_json::Value> {
    let parsed = family
        .parse_reply_checked(text, cut_off, calls_only)
        .map_err(|e| match e {
            hermes::ParseError::Truncated => anyhow::anyhow!("{e}; raise --max-tokens"),
            other => other.into(),
        })?;
    let mut calls = Vec::with_capacity(parsed.calls.len());
    for call in parsed.calls {
        let tool = tools.get(&call.name).ok_or_else(|| {
            anyhow::anyhow!(
                "the model called `{}`, which is not among the tools",
                call.name
            )
        })?;
        let arguments = tool
            .validator
            .check_value(call.arguments)
            .with_context(|| format!("the call of `{}` does not validate", call.name))?;
        calls.push(json!({"name": call.name, "arguments": arguments}));
    }
    Ok(json!({"content": parsed.content, "tool_calls": calls}))
}
