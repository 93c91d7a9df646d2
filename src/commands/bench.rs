//! `rein bench`: measurements that need a loaded model. `reuse`: time to first token
//! of a later turn with the cached prefix vs a full re-prefill of the same tokens on
//! an engine of its own (each arm reports what it evaluated and what it took from a
//! cache, and no ratio is printed when the cold arm took anything);
//! `concurrency`: aggregate decode tokens/s with 1, 2, 4, … sessions batched together;
//! `memory`: peak resident memory against the planner's estimate (bench_memory.rs);
//! `serve`: an HTTP load test (bench_serve.rs); `prompt-cache`: a fresh process's
//! first turn with and without the prefix saved on disk (bench_prompt_cache.rs);
//! `speculative`: agent-shaped replies with prompt-lookup drafting against plain
//! decoding (bench_speculative.rs); `forced`: forced grammar tokens (bench_forced.rs);
//! `speed`: prompt and generation tokens/s of several models (bench_speed.rs).

use std::time::{Duration, Instant};

use anyhow::Context;

use clap::{Args, Subcommand};
use rein_llama::{Engine, GenerateRequest, Prompt, SamplingParams, TokenId};
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
    /// The first turn of a fresh process: empty prompt cache vs the saved prefix.
    PromptCache(super::bench_prompt_cache::PromptCacheBenchArgs),
    /// Agent-shaped replies decoded with prompt-lookup drafting vs plain decoding.
    Speculative(super::bench_speculative::SpeculativeBenchArgs),
    /// Agent-shaped calls decoded with the grammar's forced tokens appended without
    /// sampling vs plain constrained decoding (GBNF and llguidance).
    Forced(super::bench_forced::ForcedBenchArgs),
    /// Prompt and generation tokens/s of several models (a quantization ladder),
    /// interleaved, as llama-bench measures them.
    Speed(super::bench_speed::SpeedBenchArgs),
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
    /// Repetitions (interleaved; medians are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
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
    /// Prompt tokens of the session that joins three running ones (its time to first
    /// token is measured with mixed batches and without); 0 skips that measurement.
    #[arg(long, default_value_t = 512)]
    pub join_tokens: u32,
    /// Repetitions of the join measurement (interleaved; medians are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
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
        BenchCommand::PromptCache(args) => {
            runtime()?.block_on(super::bench_prompt_cache::run(args))
        }
        BenchCommand::Speculative(args) => runtime()?.block_on(super::bench_speculative::run(args)),
        BenchCommand::Forced(args) => runtime()?.block_on(super::bench_forced::run(args)),
        BenchCommand::Speed(args) => runtime()?.block_on(super::bench_speed::run(args)),
    }
}

pub(crate) fn greedy(prompt: Prompt, max_tokens: u32) -> GenerateRequest {
    let mut request = GenerateRequest::new(prompt);
    request.sampling = SamplingParams::greedy();
    request.max_tokens = max_tokens;
    request.ignore_eog = true;
    request
}

/// One measured turn of an arm of `reuse`.
struct ArmTurn {
    ttft_ms: f64,
    prompt_tokens: usize,
    reused_tokens: usize,
}

/// The conversation of repetition `rep`: about `ctx` tokens of history, then one
/// more user turn. Each repetition opens differently, so none shares a prefix with
/// another.
async fn reuse_history(engine: &Engine, ctx: u32, rep: usize) -> anyhow::Result<Vec<TokenId>> {
    let filler = "The agent read the file, ran the tests and wrote down what it found. ";
    let mut history = engine
        .tokenize(
            &format!("User: run {rep}: here is the log of the work so far.\n"),
            true,
        )
        .await?;
    let sentence = engine.tokenize(filler, false).await?;
    while history.len() + sentence.len() < ctx as usize {
        history.extend_from_slice(&sentence);
    }
    Ok(history)
}

async fn reuse(args: ReuseArgs) -> anyhow::Result<()> {
    if args.reps == 0 {
        anyhow::bail!("--reps needs at least 1");
    }
    let path = args.model.resolve()?;
    let config = args.model.engine_config(path, Some(args.ctx + 512), 1)?;
    let cached_engine = Engine::load(config.clone()).await?;
    let question = "\nUser: and what should happen next?\nAssistant:";
    let (mut cached_turns, mut cold_turns) = (Vec::new(), Vec::new());
    for rep in 0..args.reps {
        // Interleaved: each repetition measures both arms on the same turn.
        let history = reuse_history(&cached_engine, args.ctx, rep).await?;
        let mut cached = cached_engine.session().await?;
        let first = cached
            .generate(greedy(Prompt::Tokens(history.clone()), 16))
            .await?;
        let mut turn = history;
        turn.extend_from_slice(&first.tokens);
        turn.extend(cached_engine.tokenize(question, false).await?);
        let with_reuse = cached
            .generate(greedy(Prompt::Tokens(turn.clone()), 1))
            .await?;
        drop(cached);
        // The cold arm runs on a fresh engine of its own: nothing it evaluates can
        // come from another session's KV (an engine's sessions share prefixes, even
        // with a session gone).
        let cold_engine = Engine::load(config.clone()).await?;
        let mut fresh = cold_engine.session().await?;
        let full = fresh
            .generate(greedy(Prompt::Tokens(turn.clone()), 1))
            .await?;
        drop(fresh);
        drop(cold_engine);
        for (turns, output) in [(&mut cached_turns, with_reuse), (&mut cold_turns, full)] {
            turns.push(ArmTurn {
                ttft_ms: output.prefill_time.as_secs_f64() * 1000.0,
                prompt_tokens: output.prompt_tokens,
                reused_tokens: output.reused_tokens,
            });
        }
    }
    let reuse_ms = median(cached_turns.iter().map(|t| t.ttft_ms).collect());
    let full_ms = median(cold_turns.iter().map(|t| t.ttft_ms).collect());
    let prompt_tokens = cached_turns.last().map_or(0, |t| t.prompt_tokens);
    let reused = cached_turns.last().map_or(0, |t| t.reused_tokens);
    // A cold arm that took anything from a cache measured no re-prefill: no ratio.
    let cold_reused: usize = cold_turns.iter().map(|t| t.reused_tokens).sum();
    let refused = (cold_reused > 0).then(|| {
        format!("the cold arm took {cold_reused} tokens from a cache, so it measured no full re-prefill")
    });
    let ratio = match &refused {
        Some(_) => serde_json::Value::Null,
        None => json!((reuse_ms / full_ms.max(f64::EPSILON) * 1000.0).round() / 1000.0),
    };
    let arm = |turns: &[ArmTurn], ms: f64| {
        json!({
            "ttft_ms": round(ms),
            "evaluated_tokens": turns.last().map_or(0, |t| t.prompt_tokens - t.reused_tokens),
            "cached_tokens": turns.last().map_or(0, |t| t.reused_tokens),
        })
    };
    let result = json!({
        "model": cached_engine.info().description,
        "reps": args.reps,
        "prompt_tokens": prompt_tokens,
        "reused_tokens": reused,
        "ttft_reuse_ms": round(reuse_ms),
        "ttft_full_ms": round(full_ms),
        "ratio": ratio,
        "reuse": arm(&cached_turns, reuse_ms),
        "full": arm(&cold_turns, full_ms),
        "refused": refused,
    });
    let summary = format!(
        "turn of {prompt_tokens} tokens, median of {}: time to first token {reuse_ms:.1} ms with the cached prefix ({reused} reused), {full_ms:.1} ms re-prefilled on an engine of its own",
        args.reps
    );
    report(
        &result,
        args.json,
        &summary,
        reuse_ms / full_ms.max(f64::EPSILON),
        refused,
    )
}

/// Prints `result` as JSON, or `summary` and the `ratio` (none when `refused`), and
/// fails with the reason when a cold arm was `refused`.
pub(crate) fn report(
    result: &serde_json::Value,
    json: bool,
    summary: &str,
    ratio: f64,
    refused: Option<String>,
) -> anyhow::Result<()> {
    if json {
        println!("{result}");
    } else {
        println!("{summary}");
        match &refused {
            Some(reason) => println!("no ratio: {reason}"),
            None => println!("ratio {ratio:.3}x"),
        }
    }
    match refused {
        Some(reason) => anyhow::bail!("{reason}"),
        None => Ok(()),
    }
}

/// The median of `values` (the mean of the middle two for an even count).
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
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
    let model = engine.info().description.clone();
    let mut rates = serde_json::Map::new();
    let mut decode_rates = serde_json::Map::new();
    let mut total_rates = serde_json::Map::new();
    let mut prompts = serde_json::Map::new();
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
        let (mut generated, mut evaluated, mut cached) = (0usize, 0usize, 0usize);
        let mut decode_window = Duration::ZERO;
        for task in tasks {
            let output = task.await??;
            generated += output.tokens.len();
            evaluated += output.prompt_tokens - output.reused_tokens;
            cached += output.reused_tokens;
            decode_window = decode_window.max(output.decode_time);
        }
        let wall = started.elapsed().as_secs_f64();
        let rate = generated as f64 / wall;
        // As llama-batched-bench counts: tokens after each session's first over the
        // longest decode (S_TG), and prompt plus generated tokens over the wall time (S).
        let after_first = generated.saturating_sub(count as usize);
        let decode_rate = after_first as f64 / decode_window.as_secs_f64().max(1e-9);
        let total_rate = (generated + evaluated) as f64 / wall;
        if !args.json {
            println!("{count} sessions: {generated} tokens, {rate:.1} tokens/s in aggregate ({evaluated} prompt tokens evaluated, {cached} from a cache)");
        }
        rates.insert(count.to_string(), json!(round(rate)));
        decode_rates.insert(count.to_string(), json!(round(decode_rate)));
        total_rates.insert(count.to_string(), json!(round(total_rate)));
        prompts.insert(
            count.to_string(),
            json!({"evaluated_tokens": evaluated, "cached_tokens": cached}),
        );
    }
    drop(engine);
    let join = match args.join_tokens {
        0 => serde_json::Value::Null,
        tokens => join_ttft(&args, tokens).await?,
    };
    if args.json {
        println!(
            "{}",
            json!({
                "model": model,
                "tokens_per_session": args.tokens,
                "aggregate_tokens_per_s": rates,
                "decode_tokens_per_s": decode_rates,
                "total_tokens_per_s": total_rates,
                "prompt_tokens": prompts,
                "join": join,
            })
        );
    }
    Ok(())
}

/// Sessions running when another joins.
const RUNNING: usize = 3;

/// The time to first token of a session with a `tokens`-token prompt that joins
/// [`RUNNING`] generating sessions, on an engine with mixed batches and on one
/// without (the prompt's chunks and the others' steps as separate decodes), in
/// interleaved repetitions; medians.
async fn join_ttft(args: &ConcurrencyArgs, tokens: u32) -> anyhow::Result<serde_json::Value> {
    let path = args.model.resolve()?;
    let per_session = tokens + 64;
    let mut config = args
        .model
        .engine_config(path, Some(per_session.max(args.tokens + 64)), 4)?;
    config.mixed_batches = true;
    let mixed = Engine::load(config.clone()).await?;
    config.mixed_batches = false;
    let separate = Engine::load(config).await?;
    let (mut mixed_ms, mut separate_ms) = (Vec::new(), Vec::new());
    for rep in 0..args.reps.max(1) {
        let order = match rep % 2 {
            0 => [(&mixed, true), (&separate, false)],
            _ => [(&separate, false), (&mixed, true)],
        };
        for (engine, is_mixed) in order {
            let ms = join_once(engine, tokens, rep).await?;
            match is_mixed {
                true => mixed_ms.push(ms),
                false => separate_ms.push(ms),
            }
        }
    }
    let (mixed_ms, separate_ms) = (median(mixed_ms), median(separate_ms));
    if !args.json {
        println!(
            "a {tokens}-token prompt joining {RUNNING} generating sessions: first token after {mixed_ms:.0} ms with mixed batches, {separate_ms:.0} ms without ({:.2}x)",
            mixed_ms / separate_ms.max(1e-9)
        );
    }
    Ok(json!({
        "running_sessions": RUNNING,
        "prompt_tokens": tokens,
        "ttft_mixed_ms": round(mixed_ms),
        "ttft_separate_ms": round(separate_ms),
        "ratio": round(mixed_ms / separate_ms.max(1e-9) * 1000.0) / 1000.0,
    }))
}

/// One join on `engine`: the running sessions start, and once each has produced a
/// token the joining session asks; its time to first token in milliseconds.
async fn join_once(engine: &Engine, tokens: u32, rep: usize) -> anyhow::Result<f64> {
    let mut running = Vec::new();
    let (started_tx, mut started_rx) = tokio::sync::mpsc::unbounded_channel();
    for i in 0..RUNNING {
        let engine = engine.clone();
        let started = started_tx.clone();
        running.push(tokio::spawn(async move {
            let mut session = engine.session().await?;
            let prompt =
                format!("Run {rep}, session {i}: write a long story about a lighthouse keeper.");
            let mut stream = session.generate_stream(greedy(Prompt::Text(prompt), 512))?;
            let mut told = false;
            while let Some(event) = stream.next().await {
                if let rein_llama::GenerateEvent::Text(_) = event? {
                    if !told {
                        let _ = started.send(());
                        told = true;
                    }
                }
            }
            anyhow::Ok(())
        }));
    }
    // Only the running sessions hold a sender now: one that fails before its first
    // token ends the wait instead of hanging it.
    drop(started_tx);
    for _ in 0..RUNNING {
        if started_rx.recv().await.is_none() {
            break;
        }
    }
    let filler = "The agent read the file, ran the tests and wrote down what it found. ";
    let mut prompt = engine
        .tokenize(&format!("Run {rep}: the log so far.\n"), true)
        .await?;
    let sentence = engine.tokenize(filler, false).await?;
    while prompt.len() + sentence.len() <= tokens as usize {
        prompt.extend_from_slice(&sentence);
    }
    let mut session = engine.session().await?;
    let asked = Instant::now();
    let mut stream = session.generate_stream(greedy(Prompt::Tokens(prompt), 1))?;
    let mut ttft = None;
    while let Some(event) = stream.next().await {
        if ttft.is_none()
            && matches!(
                event?,
                rein_llama::GenerateEvent::Text(_) | rein_llama::GenerateEvent::Done(_)
            )
        {
            ttft = Some(asked.elapsed().as_secs_f64() * 1000.0);
        }
    }
    // The running sessions close as their tasks end; a round trip through the owner
    // thread returns once it has taken those closes, so no generation is decoding when
    // the engine is dropped and the process exits (llama.cpp's teardown under a decode
    // crashes).
    for task in running {
        task.abort();
        let _ = task.await;
    }
    engine.tokenize("", false).await?;
    ttft.context("the joining session produced nothing")
}

pub(crate) fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}
