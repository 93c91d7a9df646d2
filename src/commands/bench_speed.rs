//! `rein bench speed`: prompt evaluation and generation tokens/s of several models
//! (the arms of a quantization ladder), as llama.cpp's `llama-bench` measures them: a
//! prompt of fixed tokens evaluated from an empty cache, then tokens generated
//! greedily one at a time whatever they are; models interleaved within each
//! repetition, medians over repetitions. With `--json FILE`, one row per model with
//! its file type, size and bits per weight (what the quantization report reads).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rein_eval::quant_report::SpeedRow;
use rein_llama::{Engine, Prompt, TokenId};

use super::bench::{greedy, median, round};

/// Arguments of `rein bench speed`.
#[derive(Args)]
pub struct SpeedBenchArgs {
    /// The models, comma-separated: names, paths, `hf:…`, or `NAME@QUANT` for a copy
    /// `rein models quantize NAME --to QUANT` wrote.
    #[arg(long, value_delimiter = ',', required = true)]
    pub models: Vec<String>,
    /// Prompt tokens evaluated.
    #[arg(long, default_value_t = 512)]
    pub prompt: u32,
    /// Tokens generated.
    #[arg(long, default_value_t = 64)]
    pub generate: u32,
    /// Repetitions (models interleaved; medians are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Fail instead of pulling a named model that is not in the cache.
    #[arg(long)]
    pub no_pull: bool,
    /// Also write the rows as a JSON array to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs `rein bench speed`.
pub async fn run(args: SpeedBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.reps >= 1, "--reps needs at least 1");
    anyhow::ensure!(
        args.prompt >= 2 && args.generate >= 2,
        "--prompt and --generate need at least 2 tokens each"
    );
    let mut engines = Vec::new();
    for name in &args.models {
        let path = super::quant_diff::resolve(name, !args.no_pull)?;
        let info = rein_models::GgufInfo::read(&path)?;
        let sha256 = super::quant_diff::sha256_of(name, &path)?;
        let mut config = rein_llama::EngineConfig::new(path);
        config.n_ctx = Some(args.prompt + args.generate + 8);
        config.threads = args.threads;
        config.max_sessions = 1;
        let engine = Engine::load(config)
            .await
            .with_context(|| format!("load {name}"))?;
        engines.push((name, info, sha256, engine));
    }
    let mut rates = vec![(Vec::new(), Vec::new()); engines.len()];
    for rep in 0..args.reps {
        for ((name, _, _, engine), (prefill, decode)) in engines.iter().zip(&mut rates) {
            let vocab = engine.info().n_vocab.max(1000) as TokenId;
            // Each repetition's prompt differs from its first token, so none reuses
            // another's cache.
            let tokens: Vec<TokenId> = (0..args.prompt as TokenId)
                .map(|i| 100 + (i * 7919 + rep as TokenId * 104_729) % (vocab - 200))
                .collect();
            let mut session = engine.session().await?;
            let output = session
                .generate(greedy(Prompt::Tokens(tokens), args.generate))
                .await
                .with_context(|| format!("{name}, repetition {}", rep + 1))?;
            anyhow::ensure!(
                output.reused_tokens == 0,
                "{name} reused {} cached prompt tokens; the prefill was not measured cold",
                output.reused_tokens
            );
            prefill.push(output.prompt_tokens as f64 / output.prefill_time.as_secs_f64());
            // The first token comes from the prompt's logits: the decodes are the rest.
            decode.push(
                output.tokens.len().saturating_sub(1) as f64 / output.decode_time.as_secs_f64(),
            );
        }
    }
    let rows: Vec<SpeedRow> = engines
        .iter()
        .zip(rates)
        .map(|((name, info, sha256, _), (prefill, decode))| SpeedRow {
            model: name.to_string(),
            file_type: info.file_type.clone(),
            sha256: sha256.clone(),
            file_size: info.file_size,
            bits_per_weight: info.bits_per_weight(),
            prompt_tokens_per_s: round(median(prefill)),
            generated_tokens_per_s: round(median(decode)),
            reps: args.reps,
        })
        .collect();
    println!(
        "| model | type | size (MiB) | bits/weight | prompt tokens/s | generated tokens/s |\n|---|---|---|---|---|---|"
    );
    for row in &rows {
        println!(
            "| {} | {} | {:.0} | {:.2} | {} | {} |",
            row.model,
            row.file_type,
            row.file_size as f64 / (1024.0 * 1024.0),
            row.bits_per_weight,
            row.prompt_tokens_per_s,
            row.generated_tokens_per_s
        );
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&rows)?;
        rein_tools::write_atomically(path, format!("{text}\n").as_bytes())
            .with_context(|| path.display().to_string())?;
    }
    Ok(())
}
