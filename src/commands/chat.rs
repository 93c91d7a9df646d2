//! `rein chat`: one prompt, rendered with the model's own chat template, answered with
//! the reply streamed to stdout.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use rein_format::{ChatTemplate, RenderContext, CHATML_TEMPLATE};
use rein_llama::{Engine, EngineConfig, GenerateRequest, Prompt, SamplingParams};
use rein_protocol::Message;

/// Arguments of `rein chat`.
#[derive(Args)]
pub struct ChatArgs {
    /// The prompt.
    pub prompt: String,
    /// A model name (`rein models list`), a .gguf path, or hf:owner/repo/file.gguf.
    #[arg(long, short, default_value = "default")]
    pub model: String,
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
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Layers to offload to a GPU (GPU builds only).
    #[arg(long, default_value_t = 0)]
    pub gpu_layers: u32,
    /// Fail instead of pulling a named model that is not in the cache.
    #[arg(long)]
    pub no_pull: bool,
}

/// Runs `rein chat`.
pub fn run(args: ChatArgs) -> anyhow::Result<()> {
    if !(0.0..=5.0).contains(&args.temperature) {
        anyhow::bail!(
            "--temperature must be between 0 and 5, got {}",
            args.temperature
        );
    }
    let path = super::resolve(&args.model, !args.no_pull)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(async move {
            let mut config = EngineConfig::new(&path);
            config.n_ctx = args.ctx;
            config.threads = args.threads;
            config.gpu_layers = args.gpu_layers;
            let engine = Engine::load(config).await?;
            let info = engine.info();
            let template_source = info.chat_template.clone().unwrap_or_else(|| {
                tracing::warn!("the model has no chat template; using ChatML");
                CHATML_TEMPLATE.to_string()
            });
            let template = ChatTemplate::new(&template_source)?;
            let mut messages = Vec::new();
            if let Some(system) = &args.system {
                messages.push(Message::system(system.clone()));
            }
            messages.push(Message::user(args.prompt.clone()));
            let prompt = template.render(&RenderContext {
                messages: &messages,
                tools: None,
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
            let mut session = engine.session().await?;
            let stdout = std::io::stdout();
            let output = session
                .generate_stream(request)?
                .finish(|chunk| {
                    let mut out = stdout.lock();
                    let _ = out.write_all(chunk.as_bytes());
                    let _ = out.flush();
                })
                .await?;
            println!();
            tracing::info!(
                stop = output.stop_reason.as_str(),
                prompt_tokens = output.prompt_tokens,
                completion_tokens = output.tokens.len(),
                prefill_ms = output.prefill_time.as_millis() as u64,
                decode_ms = output.decode_time.as_millis() as u64,
                "done"
            );
            Ok::<_, anyhow::Error>(())
        })
        .context("chat failed")
}
