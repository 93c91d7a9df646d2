//! The subcommands, and the model resolution they share.

pub mod chat;
pub mod models;
pub mod replay;
pub mod run;

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
