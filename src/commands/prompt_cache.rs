//! `rein cache`: the prompt cache on disk (the KV of system prompts and tool blocks
//! kept for the next process), where it lives, and listing and clearing it.

use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;
use rein_llama::PromptCacheConfig;

use super::human_bytes;

/// The `rein cache` subcommands.
#[derive(Subcommand)]
pub enum CacheCommand {
    /// The cached prompt prefixes, most recently used first, and their total size.
    List {
        /// One JSON object: {"dir", "entries": [{"path", "bytes", "used_s_ago"}], "bytes"}.
        #[arg(long)]
        json: bool,
    },
    /// Remove every cached prompt prefix.
    Clear,
}

/// The prompt cache's directory: `REIN_PROMPT_CACHE_DIR` when set, else
/// `rein/prompt-cache` under the user's cache directory.
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("REIN_PROMPT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let base =
        dirs::cache_dir().context("no cache directory for this user; set REIN_PROMPT_CACHE_DIR")?;
    Ok(base.join("rein").join("prompt-cache"))
}

/// The cache settings of an engine: `None` when `enabled` is false or no directory can
/// be found (a run without the cache is only slower). `REIN_PROMPT_CACHE_MAX_MIB` sets
/// the size bound (default 2048). A `model` that names a manifest entry gives its
/// sha256 (verified when pulled), so the file is not hashed again.
pub fn config(enabled: bool, model: Option<&str>) -> Option<PromptCacheConfig> {
    if !enabled {
        return None;
    }
    let dir = match cache_dir() {
        Ok(dir) => dir,
        Err(e) => {
            tracing::warn!("no prompt cache: {e:#}");
            return None;
        }
    };
    let mut config = PromptCacheConfig::new(dir);
    config.model_sha256 = model.and_then(|model| {
        let name = super::manifest_name(model).ok()??;
        Some(
            rein_models::Manifest::embedded()
                .ok()?
                .get(&name)
                .ok()?
                .sha256
                .clone(),
        )
    });
    if let Some(mib) = std::env::var("REIN_PROMPT_CACHE_MAX_MIB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        config.max_bytes = mib.saturating_mul(1 << 20);
    }
    Some(config)
}

/// Runs a `rein cache` subcommand.
pub fn run(command: CacheCommand) -> anyhow::Result<()> {
    let dir = cache_dir()?;
    match command {
        CacheCommand::List { json } => {
            let entries = rein_llama::list_prompt_cache(&dir)
                .with_context(|| format!("cannot read {}", dir.display()))?;
            let total: u64 = entries.iter().map(|e| e.bytes).sum();
            if json {
                let entries: Vec<serde_json::Value> = entries
                    .iter()
                    .map(|e| {
                        serde_json::json!({
                            "path": e.path.display().to_string(),
                            "bytes": e.bytes,
                            "used_s_ago": e.used.elapsed().map(|d| d.as_secs()).unwrap_or(0),
                        })
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({"dir": dir.display().to_string(), "entries": entries, "bytes": total})
                );
                return Ok(());
            }
            for entry in &entries {
                let age = entry
                    .used
                    .elapsed()
                    .map(|d| format!("{} s ago", d.as_secs()))
                    .unwrap_or_else(|_| "just now".into());
                println!(
                    "{}  {:>10}  used {age}",
                    entry.path.display(),
                    human_bytes(entry.bytes)
                );
            }
            println!(
                "{} cached prefix(es), {} in {}",
                entries.len(),
                human_bytes(total),
                dir.display()
            );
        }
        CacheCommand::Clear => {
            let (count, bytes) = rein_llama::clear_prompt_cache(&dir)
                .with_context(|| format!("cannot clear {}", dir.display()))?;
            println!(
                "removed {count} cached prefix(es), {} from {}",
                human_bytes(bytes),
                dir.display()
            );
        }
    }
    Ok(())
}
