//! `rein bench memory`: sessions that fill their share of the context at once, then
//! the process's peak resident memory against the memory planner's estimate.

use clap::Args;
use rein_llama::{Engine, Prompt};
use rein_models::{peak_resident_memory, GgufInfo};
use serde_json::json;

use super::bench::{greedy, round};

/// Tokens each session generates after its prompt.
const GENERATED: u32 = 32;

/// Arguments of `rein bench memory`.
#[derive(Args)]
pub struct MemoryBenchArgs {
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// Tokens of context per session; each session's prompt nearly fills it.
    #[arg(long, default_value_t = 2048)]
    pub ctx: u32,
    /// Sessions that run at once.
    #[arg(long, default_value_t = 4)]
    pub sessions: u32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// Runs the measurement.
pub async fn run(args: MemoryBenchArgs) -> anyhow::Result<()> {
    if args.ctx < GENERATED * 4 {
        anyhow::bail!("--ctx must be at least {}", GENERATED * 4);
    }
    let sessions = args.sessions.max(1);
    let path = args.model.resolve()?;
    let info = GgufInfo::read(&path)?;
    let plan = args.model.plan(&info, args.ctx, sessions)?;
    let config = args.model.engine_config_for(path, &plan);
    let engine = Engine::load(config).await?;
    let filler = engine
        .tokenize(
            " The agent read the file, ran the tests and wrote down what it found.",
            false,
        )
        .await?;
    let prompt_tokens = (args.ctx - GENERATED - 16) as usize;
    let mut tasks = Vec::new();
    for i in 0..sessions {
        let mut prompt = engine
            .tokenize(&format!("Session {i} keeps this log:"), true)
            .await?;
        while prompt.len() < prompt_tokens {
            let room = prompt_tokens - prompt.len();
            prompt.extend_from_slice(&filler[..filler.len().min(room)]);
        }
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            let mut session = engine.session().await?;
            session
                .generate(greedy(Prompt::Tokens(prompt), GENERATED))
                .await
        }));
    }
    let mut held = 0usize;
    for task in tasks {
        let output = task.await??;
        held += output.prompt_tokens + output.tokens.len();
    }
    let peak = peak_resident_memory()
        .ok_or_else(|| anyhow::anyhow!("this system does not report peak resident memory"))?;
    let estimate = plan.ram.total(sessions);
    let ratio = peak as f64 / estimate.max(1) as f64;
    let mib = |b: u64| round(b as f64 / 1048576.0);
    let result = json!({
        "model": engine.info().description,
        "ctx_per_session": args.ctx,
        "sessions": sessions,
        "kv_type": args.model.kv.name(),
        "tokens_held": held,
        "estimate_mib": mib(estimate),
        "estimate_weights_mib": mib(plan.ram.weights),
        "estimate_kv_mib": mib(plan.ram.kv(sessions)),
        "estimate_compute_mib": mib(plan.ram.compute),
        "estimate_runtime_mib": mib(plan.ram.runtime),
        "peak_rss_mib": mib(peak),
        "peak_over_estimate": (ratio * 1000.0).round() / 1000.0,
    });
    if args.json {
        println!("{result}");
    } else {
        println!(
            "{sessions} sessions of {} tokens ({held} held): peak resident {} MiB, estimate {} MiB (peak/estimate {:.3})",
            args.ctx,
            mib(peak),
            mib(estimate),
            ratio
        );
    }
    Ok(())
}
