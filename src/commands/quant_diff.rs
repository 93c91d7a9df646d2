//! `rein quant-diff`: the turns a reference model recorded in its traces (with
//! `--set record_prompts=on`), read teacher-forced by it and by another quantization
//! of it; their next-token distributions compared at the tokens that decide a call.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rein_eval::quant_diff::{self, Compared, TeacherForcing};
use rein_llama::{ForcedReader, ForcingModel, KvCacheType};
use rein_protocol::RecordedPrompt;

/// `rein quant-diff` arguments.
#[derive(Args)]
pub struct QuantDiffArgs {
    /// The reference model: the one that wrote the traces (a name, a path, `hf:…`, or
    /// `NAME@QUANT` for a copy `rein models quantize NAME --to QUANT` wrote).
    pub reference: String,
    /// The models compared with it (same forms), e.g. `default@q8_0 default@q3_k_m`;
    /// the reference itself for a KV cache comparison (`--kv`).
    #[arg(required = true)]
    pub others: Vec<String>,
    /// A directory of traces the reference model wrote with `--set
    /// record_prompts=on` (an eval output directory, or its `traces/` folder).
    #[arg(long)]
    pub traces: PathBuf,
    /// The compared models' KV cache types, comma-separated: each model is compared
    /// once per type (the reference reads with f16).
    #[arg(long, default_value = "f16", value_delimiter = ',', value_parser = super::choices::typed::<KvCacheType>(&super::choices::KV_TYPES))]
    pub kv: Vec<KvCacheType>,
    /// Tokens each reader's context holds (a recorded prompt and its reply must fit).
    #[arg(long, default_value_t = 8192)]
    pub ctx: u32,
    /// Threads (all cores when left out).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Replay at most this many turns.
    #[arg(long)]
    pub max_turns: Option<usize>,
    /// Also write the comparisons as a JSON array to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Do not pull a named model that is missing from the cache.
    #[arg(long)]
    pub no_pull: bool,
}

/// Runs `rein quant-diff`.
pub fn run(args: QuantDiffArgs) -> anyhow::Result<()> {
    let files = quant_diff::trace_files(&args.traces)?;
    anyhow::ensure!(
        !files.is_empty(),
        "no traces (*.jsonl) under {}",
        args.traces.display()
    );
    let reference = ForcingModel::load(&resolve(&args.reference, !args.no_pull)?)?;
    let mut models = Vec::new();
    for name in &args.others {
        let path = resolve(name, !args.no_pull)?;
        let file_type = rein_models::GgufInfo::read(&path)?.file_type;
        let sha256 = sha256_of(name, &path)?;
        let model = ForcingModel::load(&path)?;
        reference.same_tokenizer(&model).map_err(|reason| {
            anyhow::anyhow!(
                "{name} cannot be compared with {}: {reason}",
                args.reference
            )
        })?;
        models.push((name, file_type, sha256, model));
    }
    let mut reference_reader = Reader {
        model: &reference,
        reader: reference.reader(args.ctx, args.threads, KvCacheType::F16)?,
    };
    let mut readers = Vec::new();
    for (name, file_type, sha256, model) in &models {
        for &kv in &args.kv {
            let label = match kv {
                KvCacheType::F16 => name.to_string(),
                kv => format!("{name} (KV {kv})"),
            };
            let reader = Reader {
                model,
                reader: model.reader(args.ctx, args.threads, kv)?,
            };
            readers.push((label, file_type.clone(), sha256.clone(), kv, reader));
        }
    }
    let mut others: Vec<Compared<'_>> = readers
        .iter_mut()
        .map(|(name, file_type, sha256, kv, reader)| Compared {
            name: name.clone(),
            file_type: file_type.clone(),
            sha256: sha256.clone(),
            kv: kv.to_string(),
            model: reader,
        })
        .collect();
    let diffs = quant_diff::run(
        &files,
        (&args.reference, &mut reference_reader),
        &mut others,
        args.max_turns,
        &mut |file, turns| eprintln!("{turns} turns replayed ({})", file.display()),
    )?;
    if let Some(reason) = diffs
        .iter()
        .all(|d| d.turns == 0)
        .then(|| diffs.iter().flat_map(|d| d.skipped.first()).next())
    {
        match reason {
            Some(reason) => anyhow::bail!(
                "no turn under {} could be replayed; the first: {reason}",
                args.traces.display()
            ),
            None => anyhow::bail!(
                "no turn was replayed: the traces under {} recorded no prompts (run the eval with --set record_prompts=on)",
                args.traces.display()
            ),
        }
    }
    println!("{}", quant_diff::markdown(&diffs));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&diffs)?;
        rein_tools::write_atomically(path, text.as_bytes())
            .with_context(|| path.display().to_string())?;
    }
    Ok(())
}

/// `NAME@QUANT` (a quantized copy in the cache) split into its model and type; `None`
/// for any other model reference (a file whose path holds `@` is that file).
fn quantized_spec(spec: &str) -> Option<(&str, &str)> {
    spec.rsplit_once('@')
        .filter(|_| !std::path::Path::new(spec).is_file())
}

/// The file `spec` names: `NAME@QUANT` or any model reference.
pub(crate) fn resolve(spec: &str, pull_missing: bool) -> anyhow::Result<PathBuf> {
    match quantized_spec(spec) {
        None => super::resolve(spec, pull_missing),
        Some((model, quant)) => {
            let source = super::resolve(model, pull_missing)?;
            Ok(super::quantized_copy(model, &source, quant)?.0)
        }
    }
}

/// The sha256 of the file `spec` names, resolved to `path`.
pub(crate) fn sha256_of(spec: &str, path: &std::path::Path) -> anyhow::Result<String> {
    match quantized_spec(spec) {
        None => super::file_sha256_of(spec, path, false),
        Some((model, _)) => super::file_sha256_of(model, path, true),
    }
}

/// A model's reader as `rein-eval` asks for logits: byte offsets of the reply mapped
/// to the tokens that spell them.
struct Reader<'m> {
    model: &'m ForcingModel,
    reader: ForcedReader<'m>,
}

impl TeacherForcing for Reader<'_> {
    fn logits(
        &mut self,
        prompt: &RecordedPrompt,
        reply: &str,
        bytes: &[usize],
    ) -> Result<Vec<(usize, Vec<f32>)>, String> {
        let spelled = self
            .model
            .reply_tokens(reply)
            .ok_or("the reply's tokens do not spell it back")?;
        let indices = bytes
            .iter()
            .map(|&byte| {
                spelled
                    .iter()
                    .position(|(_, span)| span.contains(&byte))
                    .ok_or_else(|| format!("no token of the reply holds byte {byte}"))
            })
            .collect::<Result<Vec<usize>, String>>()?;
        let literal: Vec<std::ops::Range<usize>> = prompt
            .literal
            .iter()
            .map(|[start, end]| *start..*end)
            .collect();
        let prompt_tokens = self.reader.prompt_tokens(&prompt.text, &literal);
        let reply_tokens: Vec<_> = spelled.iter().map(|(token, _)| *token).collect();
        let read = self
            .reader
            .logits_at(&prompt_tokens, &reply_tokens, &indices)
            .map_err(|e| e.to_string())?;
        Ok(read
            .into_iter()
            .map(|forced| (forced.index, forced.logits))
            .collect())
    }
}
