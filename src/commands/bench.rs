//! `rein bench`: measurements that need a loaded model. `reuse`: time to first token
//! of a later turn with the cached prefix vs a full re-prefill of the same tokens;
//! `concurrency`: aggregate decode tokens/s with 1, 2, 4, … sessions batched together;
//! `memory`: peak resident memory against the planner's estimate (bench_memory.rs);
//! `serve`: an HTTP load test (bench_serve.rs).

use std::time::Instant;

use clap::{Args, Subcommand};
use rein_llama::{Engine, GenerateRequest, Prompt, SamplingParams};
use serde_json::json;

/// `rein bench` subcommands.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Turn N's time to first token: cached prefix vs full re-prefill.
    Reuse(ReuseArgs),
    /// Aggregate decode tokens/s for several concurrent sessions.
    Concurrency(ConcurrencyArgs),
    /// Peak resident memory of sessions that fill their context, against the plan.
    Memory(super::bench_memory::MemoryBenchArgs),
    /// A bounded HTTP load test of `rein serve`: latency percentiles and tokens/s.
    Serve(super::bench_serve::ServeBenchArgs),
}

/// Arguments of `rein bench reuse`.
#[derive(Args)]
pub struct ReuseArgs {
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// Tokens of conversation before the measured turn (about).
    #[arg(long, default_value_t = 2048)]
    pub ctx: u32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `rein bench concurrency`.
#[derive(Args)]
pub struct ConcurrencyArgs {
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// Session counts to measure, comma-separated.
    #[arg(long, default_value = "1,2,4,8", value_delimiter = ',')]
    pub sessions: Vec<u32>,
    /// Tokens each session generates.
    #[arg(long, default_value_t = 64)]
    pub tokens: u32,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// Runs `rein bench`.
pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    };
    match command {
        BenchCommand::Reuse(args) => runtime()?.block_on(reuse(args)),
        BenchCommand::Concurrency(args) => runtime()?.block_on(concurrency(args)),
        BenchCommand::Memory(args) => runtime()?.block_on(super::bench_memory::run(args)),
        BenchCommand::Serve(args) => super::bench_serve::run(args),
    }
}

pub(crate) fn greedy(prompt: Prompt, max_tokens: u32) -> GenerateRequest {
    let mut request = GenerateRequest::new(prompt);
    request.sampling = SamplingParams::greedy();
    request.max_tokens = max_tokens;
    request.ignore_eog = true;
    request
}

async fn reuse(args: ReuseArgs) -> anyhow::Result<()> {
    let path = args.model.resolve()?;
    // Two sessions hold the conversation at once (cached and fresh); they share the KV.
    let config = args.model.engine_config(path, Some(args.ctx + 512), 2)?;
    let engine = Engine::load(config).await?;
    // A conversation of about `ctx` tokens, then one more user turn.
    let filler = "The agent read the file, ran the tests and wrote down what it found. ";
    let mut history = engine
        .tokenize("User: here is the log of the work so far.\n", true)
        .await?;
    let sentence = engine.tokenize(filler, false).await?;
    while history.len() + sentence.len() < args.ctx as usize {
        history.extend_from_slice(&sentence);
    }
    let mut cached = engine.session().await?;
    let first = cached
        .generate(greedy(Prompt::Tokens(history.clone()), 16))
        .await?;
    let mut turn = history;
    turn.extend_from_slice(&first.tokens);
    turn.extend(
        engine
            .tokenize("\nUser: and what should happen next?\nAssistant:", false)
            .await?,
    );
    let with_reuse = cached
        .generate(greedy(Prompt::Tokens(turn.clone()), 1))
        .await?;
    let mut fresh = engine.session().await?;
    let full = fresh
        .generate(greedy(Prompt::Tokens(turn.clone()), 1))
        .await?;
    let reuse_ms = with_reuse.prefill_time.as_secs_f64() * 1000.0;
    let full_ms = full.prefill_time.as_secs_f64() * 1000.0;
    let result = json!({
        "model": engine.info().description,
        "prompt_tokens": turn.len(),
        "reused_tokens": with_reuse.reused_tokens,
        "ttft_reuse_ms": round(reuse_ms),
        "ttft_full_ms": round(full_ms),
        "ratio": (reuse_ms / full_ms.max(f64::EPSILON) * 1000.0).round() / 1000.0,
    });
    if args.json {
        println!("{result}");
    } else {
        println!(
            "turn of {} tokens: time to first token {:.1} ms with the cached prefix ({} reused), {:.1} ms re-prefilled ({:.3}x)",
            turn.len(), reuse_ms, with_reuse.reused_tokens, full_ms, reuse_ms / full_ms.max(f64::EPSILON)
        );
    }
    Ok(())
}

async fn concurrency(args: ConcurrencyArgs) -> anyhow::Result<()> {
    if args.sessions.is_empty() || args.sessions.contains(&0) {
        anyhow::bail!("--sessions needs positive counts, e.g. 1,2,4,8");
    }
    let most = args.sessions.iter().copied().max().unwrap_or(1);
    let path = args.model.resolve()?;
    let per_session = args.tokens + 64;
    let config = args.model.engine_config(path, Some(per_session), most)?;
    let engine = Engine::load(config).await?;
    let mut rates = serde_json::Map::new();
    for &count in &args.sessions {
        let started = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..count {
            let engine = engine.clone();
            let tokens = args.tokens;
            tasks.push(tokio::spawn(async move {
                let mut session = engine.session().await?;
                let prompt = format!("Session {i}: write a long story about a lighthouse keeper.");
                session.generate(greedy(Prompt::Text(prompt), tokens)).await
            }));
        }
        let mut generated = 0usize;
        for task in tasks {
            generated += task.await??.tokens.len();
        }
        let rate = generated as f64 / started.elapsed().as_secs_f64();
        if !args.json {
            println!("{count} sessions: {generated} tokens, {rate:.1} tokens/s in aggregate");
        }
        rates.insert(count.to_string(), json!(round(rate)));
    }
    if args.json {
        println!(
            "{}",
            json!({
                "model": engine.info().description,
                "tokens_per_session": args.tokens,
                "aggregate_tokens_per_s": rates,
            })
        );
    }
    Ok(())
}

pub(crate) fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}
