//! `rein bench prompt-cache`: the first turn of a fresh process (the agent's system
//! prompt, tools and task) with an empty prompt cache on disk, with the cache that
//! run left, with that cache in another workspace (`--fresh-workspace`), and with no
//! cache at all — each arm on an engine of its own, repetitions interleaved, medians
//! reported. Each arm reports the tokens it evaluated and the tokens it took from a
//! cache; no ratio is printed when an arm meant to be cold took anything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use rein_agent::{Agent, Profile, RunConfig};
use rein_engine::{Backend, BackendError, BackendInfo, Completion, ReplySink, TurnRequest};
use rein_llama::{Engine, EngineConfig, LocalBackend, PromptCacheConfig};
use rein_tools::{Registry, ToolLimits, Workspace};
use serde_json::json;

/// The README's first command's task.
const DEFAULT_TASK: &str = "Find every TODO comment in the files of this workspace and write them all into a new file TODO.md, one per line, as path:line: text.";

/// Arguments of `rein bench prompt-cache`.
#[derive(Args)]
pub struct PromptCacheBenchArgs {
    /// The model and how it is loaded.
    #[command(flatten)]
    pub model: super::ModelArgs,
    /// The workspace the agent starts in (copied; its facts are part of the prompt).
    #[arg(long, default_value = "examples/todo")]
    pub workdir: PathBuf,
    /// A second workspace: adds an arm whose first turn runs there with the cache the
    /// cold arm left in `--workdir` (a workspace the cache has never seen).
    #[arg(long)]
    pub fresh_workspace: Option<PathBuf>,
    /// The task of the measured first turn.
    #[arg(long, default_value = DEFAULT_TASK)]
    pub task: String,
    /// Context size in tokens, as `rein run` uses.
    #[arg(long, default_value_t = 8192)]
    pub ctx: u32,
    /// Repetitions (interleaved; medians are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Print one JSON object as the last line.
    #[arg(long)]
    pub json: bool,
}

/// The first turn of one arm.
struct FirstTurn {
    ttft_ms: f64,
    prompt_tokens: usize,
    cached_tokens: usize,
}

/// A backend that answers the agent's first turn and ends the run at the second.
struct FirstTurnOnly {
    inner: LocalBackend,
    first: Option<Completion>,
}

impl Backend for FirstTurnOnly {
    fn info(&self) -> BackendInfo {
        self.inner.info()
    }

    async fn complete(
        &mut self,
        request: TurnRequest,
        events: &mut dyn ReplySink,
    ) -> Result<Completion, BackendError> {
        if self.first.is_some() {
            return Err(BackendError::Other(
                "the benchmark measures the first turn only".into(),
            ));
        }
        let completion = self.inner.complete(request, events).await?;
        self.first = Some(completion.clone());
        Ok(completion)
    }
}

/// Runs the agent's first turn of `task` on a fresh engine of `config` in a copy of
/// `workdir`.
async fn first_turn(
    config: &EngineConfig,
    workdir: &Path,
    task: &str,
) -> anyhow::Result<FirstTurn> {
    let workspace_dir = tempfile::tempdir()?;
    rein_eval::copy_tree(workdir, workspace_dir.path())
        .with_context(|| format!("cannot copy the workspace {}", workdir.display()))?;
    let workspace = Workspace::new(workspace_dir.path(), ToolLimits::default())?;
    let engine = Engine::load(config.clone()).await?;
    let backend = FirstTurnOnly {
        inner: LocalBackend::new(&engine).await?,
        first: None,
    };
    let mut run = RunConfig::new(Profile::Full);
    run.max_turns = 1;
    run.reply_tokens = 16;
    run.wall_clock = Duration::from_secs(600);
    let mut agent = Agent::new(backend, workspace, &Registry::builtin(), run)?;
    agent.run(task, None).await;
    let first = agent
        .backend()
        .first
        .clone()
        .context("the agent made no model call")?;
    Ok(FirstTurn {
        ttft_ms: first.ttft.as_secs_f64() * 1000.0,
        prompt_tokens: first.prompt_tokens,
        cached_tokens: first.reused_tokens,
    })
}

/// Runs `rein bench prompt-cache`.
pub async fn run(args: PromptCacheBenchArgs) -> anyhow::Result<()> {
    if args.reps == 0 {
        anyhow::bail!("--reps needs at least 1");
    }
    let path = args.model.resolve()?;
    let plain = args.model.engine_config(path, Some(args.ctx), 1)?;
    let (mut cold, mut warm, mut uncached) = (Vec::new(), Vec::new(), Vec::new());
    let mut fresh = Vec::new();
    let (workdir, task) = (args.workdir.as_path(), args.task.as_str());
    for _ in 0..args.reps {
        // An empty cache directory per repetition: the cold arm computes and saves
        // the prefix, the warm arm (a new engine, as in a new process) loads it, and
        // the fresh arm meets it in another workspace.
        let cache_dir = tempfile::tempdir()?;
        let mut cached = plain.clone();
        cached.prompt_cache = Some(PromptCacheConfig::new(cache_dir.path()));
        cold.push(first_turn(&cached, workdir, task).await?);
        if let Some(other) = &args.fresh_workspace {
            fresh.push(first_turn(&cached, other, task).await?);
        }
        warm.push(first_turn(&cached, workdir, task).await?);
        uncached.push(first_turn(&plain, workdir, task).await?);
    }
    let median_ms =
        |turns: &[FirstTurn]| super::bench::median(turns.iter().map(|t| t.ttft_ms).collect());
    let (cold_ms, warm_ms, uncached_ms) =
        (median_ms(&cold), median_ms(&warm), median_ms(&uncached));
    // An arm meant to be cold that took anything from a cache measured no prefill.
    let cold_cached: usize = cold.iter().chain(&uncached).map(|t| t.cached_tokens).sum();
    let refused = (cold_cached > 0).then(|| {
        format!("a cold arm took {cold_cached} tokens from a cache, so it measured no full prefill")
    });
    // An arm's median over the cold arm's, to three places; none when a cold arm was not.
    let to_cold = |ms: f64| match &refused {
        Some(_) => serde_json::Value::Null,
        None => json!((ms / cold_ms.max(f64::EPSILON) * 1000.0).round() / 1000.0),
    };
    let ratio = to_cold(warm_ms);
    let arm = |turns: &[FirstTurn], ms: f64| {
        let last = turns.last();
        json!({
            "ttft_ms": super::bench::round(ms),
            "prompt_tokens": last.map_or(0, |t| t.prompt_tokens),
            "evaluated_tokens": last.map_or(0, |t| t.prompt_tokens - t.cached_tokens),
            "cached_tokens": last.map_or(0, |t| t.cached_tokens),
        })
    };
    let fresh_ms = (!fresh.is_empty()).then(|| median_ms(&fresh));
    let fresh_ratio = fresh_ms.map_or(serde_json::Value::Null, to_cold);
    let prompt_tokens = warm.last().map_or(0, |t| t.prompt_tokens);
    let loaded = warm.last().map_or(0, |t| t.cached_tokens);
    let result = json!({
        "model": args.model.model,
        "reps": args.reps,
        "prompt_tokens": prompt_tokens,
        "ttft_cold_ms": super::bench::round(cold_ms),
        "ttft_warm_ms": super::bench::round(warm_ms),
        "ttft_uncached_ms": super::bench::round(uncached_ms),
        "ratio": ratio,
        "ttft_fresh_ms": fresh_ms.map(super::bench::round),
        "fresh_ratio": fresh_ratio,
        "cold": arm(&cold, cold_ms),
        "fresh": fresh_ms.map(|ms| arm(&fresh, ms)),
        "warm": arm(&warm, warm_ms),
        "uncached": arm(&uncached, uncached_ms),
        "refused": refused,
    });
    let fresh_text = match (fresh_ms, fresh.last()) {
        (Some(ms), Some(turn)) => format!(
            ", {ms:.1} ms in another workspace with that cache ({} of {} tokens loaded)",
            turn.cached_tokens, turn.prompt_tokens
        ),
        _ => String::new(),
    };
    let summary = format!(
        "first turn of {prompt_tokens} tokens, median of {}: {cold_ms:.1} ms with an empty prompt cache (computed and saved), {warm_ms:.1} ms with the saved prefix ({loaded} tokens loaded){fresh_text}, {uncached_ms:.1} ms without a cache",
        args.reps
    );
    let ratio = warm_ms / cold_ms.max(f64::EPSILON);
    super::bench::report(&result, args.json, &summary, ratio, refused)
}
