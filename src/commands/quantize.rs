//! `rein models quantize`: write quantized copies of a model into the cache with
//! llama.cpp's quantizer, in-process; each file is written under a temporary name,
//! renamed on success, and described by a `.json` file beside it (what it came from).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use rein_llama::QuantizeTarget;
use rein_models::{file_sha256, provenance_path, GgufInfo, ModelCache};
use serde_json::json;

use super::human_bytes;

/// Whether a GGUF file type holds float (not yet quantized) weights.
fn is_float(file_type: &str) -> bool {
    matches!(file_type, "F32" | "F16" | "BF16")
}

/// Quantizes `model` to each of `targets` (comma-separated).
pub fn quantize(
    model: &str,
    targets: &str,
    allow_requantize: bool,
    force: bool,
    threads: Option<u32>,
) -> anyhow::Result<()> {
    let targets: Vec<QuantizeTarget> = targets
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    anyhow::ensure!(
        !targets.is_empty(),
        "--to needs at least one type (e.g. q3_k_m,q2_k)"
    );
    let source = super::resolve(model, true)?;
    let info = GgufInfo::read(&source)?;
    let requantized = !is_float(&info.file_type);
    anyhow::ensure!(
        !requantized || allow_requantize,
        "{} is already quantized ({}): quantizing it again loses more than quantizing from F16/F32 would. Pass --allow-requantize to do it anyway (the result is marked as requantized).",
        source.display(),
        info.file_type
    );
    let label = super::model_label(model, &source)?;
    let source_sha256 = super::model_sha256(model, &source)?;
    let cache = ModelCache::from_env()?;
    for target in targets {
        let dest = cache.quantized_path(&label, target.name());
        if dest.is_file() && !force {
            eprintln!("{} exists (pass --force to write it again)", dest.display());
            println!("{}", dest.display());
            continue;
        }
        let dir = dest.parent().context("the cache path has no directory")?;
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        let partial = dest.with_extension("gguf.partial");
        let outcome = quantize_with_progress(&source, &partial, target, allow_requantize, threads);
        if let Err(e) = outcome {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
        // A file llama.cpp wrote but cannot read back is not kept.
        let written = match GgufInfo::read(&partial) {
            Ok(written) => written,
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return Err(e).context("the quantized file does not read back");
            }
        };
        std::fs::rename(&partial, &dest).with_context(|| dest.display().to_string())?;
        let provenance = json!({
            "source": source.display().to_string(),
            "source_model": label,
            "source_sha256": source_sha256,
            "source_type": info.file_type,
            "target": target.name(),
            "file_type": written.file_type,
            "requantized": requantized,
            "size": written.file_size,
            "sha256": file_sha256(&dest)?,
            "rein_version": env!("CARGO_PKG_VERSION"),
        });
        let side = provenance_path(&dest);
        rein_tools::write_atomically(&side, serde_json::to_string_pretty(&provenance)?.as_bytes())
            .with_context(|| side.display().to_string())?;
        eprintln!(
            "{}: {} → {} ({}, {:.2} bits per weight{})",
            label,
            info.file_type,
            written.file_type,
            human_bytes(written.file_size),
            written.file_size as f64 * 8.0 / written.parameter_count.max(1) as f64,
            if requantized { ", requantized" } else { "" }
        );
        println!("{}", dest.display());
    }
    Ok(())
}

/// Runs the quantizer on a thread while a spinner shows the bytes written so far.
fn quantize_with_progress(
    source: &Path,
    partial: &Path,
    target: QuantizeTarget,
    allow_requantize: bool,
    threads: Option<u32>,
) -> anyhow::Result<()> {
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]") {
        bar.set_style(style);
    }
    let (src, dst) = (source.to_path_buf(), partial.to_path_buf());
    let worker = std::thread::spawn(move || {
        rein_llama::quantize(&src, &dst, target, allow_requantize, threads)
    });
    while !worker.is_finished() {
        let written = std::fs::metadata(partial).map(|m| m.len()).unwrap_or(0);
        bar.set_message(format!(
            "quantizing to {target}: {} written",
            human_bytes(written)
        ));
        bar.tick();
        std::thread::sleep(Duration::from_millis(200));
    }
    bar.finish_and_clear();
    match worker.join() {
        Ok(result) => Ok(result?),
        Err(_) => anyhow::bail!("the quantizer thread panicked"),
    }
}
