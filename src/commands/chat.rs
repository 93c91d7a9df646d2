//! `rein chat`: one prompt, prepared and read by the model's own format (as the agent
//! and the server do), answered with the reply streamed to stdout; with `--tools`,
//! answered under the tool-call grammar and printed as checked calls (calls written in
//! the model's own wrappers included). Without a prompt it reads one from piped
//! standard input, or opens a session at a terminal (`chat_session`).

use std::io::{IsTerminal, Read, Write};
use std::path::Path;

use anyhow::Context;
use clap::Args;
use std::sync::Arc;

use rein_engine::{Backend, ReadMode, ReplyEvent, Sampling, SessionSource, TurnRequest};
use rein_format::{hermes, CallCheck, Reply, ReplyProblem, ToolChoice, ToolFormat, ToolSet};
use rein_llama::{Engine, LocalModel};
use rein_protocol::{FunctionCall, Message, ToolCall, ToolSpec};

use super::chat_transcript::Conversation;
use serde_json::json;

/// Arguments of `rein chat`.
#[derive(Args)]
pub struct ChatArgs {
    /// The prompt. Without one, piped standard input is the prompt; at a terminal an
    /// interactive session opens (`/help` inside lists its commands).
    pub prompt: Option<String>,
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
    #[arg(long, default_value = "native", value_parser = super::choices::TOOL_FORMATS)]
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
    let tools = args.tools.as_deref().map(load_tools).transpose()?;
    let choice: ToolChoice = args.tool_choice.parse().unwrap_or_default();
    if let Some((_, tools)) = &tools {
        tools.check_choice(&choice)?;
    }
    let prompt = match &args.prompt {
        Some(prompt) => prompt.clone(),
        None if std::io::stdin().is_terminal() => {
            return super::chat_session::run(args, tools, choice, tool_format)
        }
        None => piped_prompt()?,
    };
    let tools = tools.map(|(_, tools)| tools);
    let path = args.model.resolve()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(chat(args, prompt, path, tools, choice, tool_format))
        .context("chat failed")
}

/// The prompt piped to standard input; an empty one is an error.
fn piped_prompt() -> anyhow::Result<String> {
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .context("cannot read the prompt from standard input")?;
    if prompt.trim().is_empty() {
        anyhow::bail!(
            "no prompt: give one as an argument, pipe it to standard input, or run `rein chat` at a terminal for a session"
        );
    }
    Ok(prompt)
}

/// The tools of a JSON file of OpenAI-style specs, as written and as prepared.
pub(super) fn load_tools(file: &Path) -> anyhow::Result<(Vec<ToolSpec>, ToolSet)> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read tools from {}", file.display()))?;
    let specs: Vec<ToolSpec> = serde_json::from_str(&text)
        .with_context(|| format!("{}: expected a JSON array of {{\"type\": \"function\", \"function\": {{...}}}} objects", file.display()))?;
    prepare_tools(specs)
}

/// `specs` as written and as prepared for the grammar (schema changes logged).
pub(super) fn prepare_tools(specs: Vec<ToolSpec>) -> anyhow::Result<(Vec<ToolSpec>, ToolSet)> {
    let tools = ToolSet::prepare(&specs)?;
    for (name, report) in tools.reports() {
        for change in &report.changes {
            tracing::info!(tool = name, "schema changed: {change}");
        }
    }
    Ok((specs, tools))
}

/// Loads the model at `path` as the chat's flags ask.
pub(super) async fn load_model(
    args: &ChatArgs,
    path: std::path::PathBuf,
) -> anyhow::Result<LocalModel> {
    let mut config = args.model.engine_config(path, args.ctx, 1)?;
    config.prompt_cache =
        super::prompt_cache::config(!args.model.no_prompt_cache, Some(&args.model.model));
    let engine = Engine::load(config).await?;
    Ok(LocalModel::new(engine)?)
}

/// The turn the chat's flags ask for over `messages`.
pub(super) fn turn_request(
    args: &ChatArgs,
    messages: Vec<Message>,
    tools: Option<Arc<ToolSet>>,
    choice: &ToolChoice,
    tool_format: ToolFormat,
) -> TurnRequest {
    let has_tools = tools.is_some();
    let mut request = TurnRequest::text(messages);
    request.tools = tools;
    request.choice = choice.clone();
    request.tool_format = tool_format;
    request.constrained = true;
    request.parallel_calls = !args.no_parallel_tool_calls;
    request.read = if has_tools {
        ReadMode::CLIENT
    } else {
        ReadMode::TEXT
    };
    request.sampling = Sampling {
        temperature: args.temperature,
        seed: args.seed,
        ..Sampling::default()
    };
    request.max_tokens = Some(args.max_tokens);
    request
}

async fn chat(
    args: ChatArgs,
    prompt: String,
    path: std::path::PathBuf,
    tools: Option<ToolSet>,
    choice: ToolChoice,
    tool_format: ToolFormat,
) -> anyhow::Result<()> {
    let model = load_model(&args, path).await?;
    let conversation = Conversation {
        system: args.system.clone(),
        messages: vec![Message::user(prompt)],
        tools: Vec::new(),
    };
    let has_tools = tools.is_some();
    let request = turn_request(
        &args,
        conversation.request_messages(),
        tools.map(Arc::new),
        &choice,
        tool_format,
    );
    let stream_text = !has_tools && !args.json;
    let stdout = std::io::stdout();
    let mut print = |event: ReplyEvent| {
        if let (true, ReplyEvent::Content(chunk)) = (stream_text, event) {
            let mut out = stdout.lock();
            let _ = out.write_all(chunk.as_bytes());
            let _ = out.flush();
        }
    };
    let mut session = model.session().await?;
    let completion = session.complete(request, &mut print).await?;
    tracing::info!(
        prompt_tokens = completion.prompt_tokens,
        completion_tokens = completion.completion_tokens,
        ms = completion.elapsed.as_millis() as u64,
        "done"
    );
    if stream_text {
        println!();
        return Ok(());
    }
    tracing::debug!(raw = %completion.text, "reply");
    let reply = if has_tools {
        checked_reply(&completion.reply)?
    } else {
        Message::assistant(completion.text)
    };
    if args.json {
        let calls: Vec<serde_json::Value> = reply.tool_calls.iter().map(call_json).collect();
        println!("{}", json!({"content": reply.content, "tool_calls": calls}));
    } else {
        print_reply(&reply);
    }
    Ok(())
}

/// A call as `rein chat` prints it: `{"name", "arguments"}`.
pub(super) fn call_json(call: &ToolCall) -> serde_json::Value {
    json!({"name": call.function.name, "arguments": call.function.arguments})
}

/// Prints a reply that was not streamed: its text, then each call on a line of JSON.
pub(super) fn print_reply(reply: &Message) {
    if let Some(content) = &reply.content {
        println!("{content}");
    }
    for call in &reply.tool_calls {
        println!("{}", call_json(call));
    }
}

/// The reply as the model's message, its calls checked, arguments with the tool's own
/// property names; a call that was cut, unreadable, unknown or invalid is an error,
/// never printed.
pub(super) fn checked_reply(reply: &Reply) -> anyhow::Result<Message> {
    for problem in &reply.problems {
        match problem {
            ReplyProblem::Parse(hermes::ParseError::Truncated) => {
                anyhow::bail!("{problem}; raise --max-tokens")
            }
            ReplyProblem::Parse(_) => anyhow::bail!("{problem}"),
            _ => {}
        }
    }
    let mut calls = Vec::with_capacity(reply.calls.len());
    for call in &reply.calls {
        match &call.check {
            CallCheck::Valid => {}
            CallCheck::UnknownTool => anyhow::bail!(
                "the model called `{}`, which is not among the tools",
                call.name
            ),
            CallCheck::Invalid(error) => {
                anyhow::bail!("the call of `{}` does not validate: {error}", call.name)
            }
        }
        calls.push(ToolCall {
            id: None,
            kind: "function".to_string(),
            function: FunctionCall {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            },
        });
    }
    Ok(Message {
        content: reply.content.clone(),
        tool_calls: calls,
        ..Message::assistant("")
    })
}
