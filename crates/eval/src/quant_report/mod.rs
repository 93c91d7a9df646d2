//! The quantization report: one table per experiment of `quant=` or `kv=` arms —
//! solved rate with its interval, first-attempt compliance, the commonest failure
//! classes, where each arm's decisions part from the source's (from `rein
//! quant-diff`), file size, bits per weight and tokens/s (from `rein bench speed`) —
//! with plots, written as markdown and SVG from those inputs alone, so regenerating
//! it is one command and gives the same bytes.

mod plots;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::quant_diff::{wilson, QuantDiff};
use crate::record::RunRecord;
use crate::EvalError;

/// One model's speed, as `rein bench speed --json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedRow {
    /// The model as named on the command line.
    pub model: String,
    /// Its GGUF file type (`Q4_K_M`, …).
    pub file_type: String,
    /// Its file's sha256: how the report finds its arm (by file type when empty).
    #[serde(default)]
    pub sha256: String,
    /// Its file size in bytes.
    pub file_size: u64,
    /// File bits per parameter.
    pub bits_per_weight: f64,
    /// Prompt tokens evaluated per second (median).
    pub prompt_tokens_per_s: f64,
    /// Tokens generated per second (median).
    pub generated_tokens_per_s: f64,
    /// Repetitions measured.
    pub reps: usize,
}

/// What the report is built from.
pub struct QuantInputs<'a> {
    /// The experiment's runs.
    pub records: &'a [RunRecord],
    /// `rein quant-diff` comparisons with the source arm (may be empty).
    pub divergence: &'a [QuantDiff],
    /// `rein bench speed` rows (may be empty).
    pub speed: &'a [SpeedRow],
    /// The commands that produced the inputs and this report, shown as written.
    pub commands: &'a [String],
}

/// One arm as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantArm {
    /// The arm (`quant=q3_k_m`, `kv=q8_0`, …).
    pub arm: String,
    /// The GGUF file type.
    pub model_type: String,
    /// The KV cache type.
    pub kv: String,
    /// File bits per weight.
    pub bits_per_weight: f64,
    /// Quantized again from an already quantized source.
    pub requantized: bool,
    /// The file's sha256.
    pub sha256: String,
    /// Runs and solved runs.
    pub runs: usize,
    /// Of those, solved.
    pub solved: usize,
    /// 95% Wilson interval of the solved rate.
    pub interval: [f64; 2],
    /// Mean first-attempt compliance over the runs that made calls.
    pub compliance: Option<f64>,
    /// The commonest failure classes, with their counts.
    pub failures: Vec<(String, u64)>,
    /// The comparison with the source at decision tokens (none for the source).
    pub divergence: Option<QuantDiff>,
    /// The file's speed on this machine.
    pub speed: Option<SpeedRow>,
    /// Wall time of the arm's runs together, in seconds.
    pub wall_s: f64,
}

impl QuantArm {
    /// The solved rate.
    pub fn rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.solved as f64 / self.runs as f64
        }
    }
}

fn is_float(file_type: &str) -> bool {
    matches!(file_type, "F32" | "F16" | "BF16")
}

/// Whether `record`'s file is the one with `sha256` (when known) or else of
/// `file_type`.
fn same_file(record: &RunRecord, sha256: &str, file_type: &str) -> bool {
    match sha256.is_empty() {
        true => record.model_type == file_type,
        false => record.model_sha256 == sha256,
    }
}

/// The arms of `inputs`, in the order they first appear in the records.
pub fn arms(inputs: &QuantInputs<'_>) -> Vec<QuantArm> {
    let mut order: Vec<&str> = Vec::new();
    let mut by_arm: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for record in inputs.records {
        if !by_arm.contains_key(record.arm.as_str()) {
            order.push(&record.arm);
        }
        by_arm.entry(&record.arm).or_default().push(record);
    }
    // The source: the `quant=source` arm, else (a KV experiment) every arm's file.
    let source_type = inputs
        .records
        .iter()
        .find(|r| r.arm == "quant=source")
        .or(inputs.records.first())
        .map(|r| r.model_type.clone())
        .unwrap_or_default();
    order
        .into_iter()
        .map(|name| {
            let runs = &by_arm[name];
            let first = runs[0];
            let solved = runs.iter().filter(|r| r.solved).count();
            let compliance: Vec<f64> = runs.iter().filter_map(|r| r.compliance_first).collect();
            let mut failures: BTreeMap<&str, u64> = BTreeMap::new();
            for run in runs {
                for (class, count) in &run.errors_by_class {
                    *failures.entry(class).or_default() += u64::from(*count);
                }
            }
            let mut failures: Vec<(String, u64)> = failures
                .into_iter()
                .map(|(class, count)| (class.to_string(), count))
                .collect();
            failures.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            failures.truncate(3);
            // Every arm but a `quant=` copy runs the source file; the source file with
            // an f16 cache is what the others are compared with.
            let source_file = name == "quant=source" || !name.starts_with("quant=");
            let reference = source_file && first.kv.eq_ignore_ascii_case("f16");
            QuantArm {
                arm: name.to_string(),
                model_type: first.model_type.clone(),
                kv: first.kv.clone(),
                bits_per_weight: first.bits_per_weight,
                requantized: !source_file && !is_float(&source_type),
                sha256: first.model_sha256.clone(),
                runs: runs.len(),
                solved,
                interval: wilson(solved, runs.len()),
                compliance: (!compliance.is_empty())
                    .then(|| compliance.iter().sum::<f64>() / compliance.len() as f64),
                failures,
                divergence: inputs
                    .divergence
                    .iter()
                    .find(|d| {
                        same_file(first, &d.other_sha256, &d.other_type)
                            && d.other_kv.eq_ignore_ascii_case(&first.kv)
                    })
                    .filter(|_| !reference)
                    .cloned(),
                // Speed is measured with an f16 cache: a KV arm has none of its own.
                speed: inputs
                    .speed
                    .iter()
                    .find(|s| same_file(first, &s.sha256, &s.file_type))
                    .filter(|_| first.kv.eq_ignore_ascii_case("f16"))
                    .cloned(),
                wall_s: runs.iter().map(|r| r.wall_ms as f64 / 1000.0).sum(),
            }
        })
        .collect()
}

/// Which neighbouring arms (in bits-per-weight order) the intervals of their solved
/// rates do and do not separate.
fn separations(arms: &[QuantArm]) -> Vec<(String, String, bool)> {
    let mut sorted: Vec<&QuantArm> = arms.iter().collect();
    sorted.sort_by(|a, b| b.bits_per_weight.total_cmp(&a.bits_per_weight));
    sorted
        .windows(2)
        .map(|pair| {
            let (a, b) = (pair[0], pair[1]);
            let apart = a.interval[0] > b.interval[1] || b.interval[0] > a.interval[1];
            (a.arm.clone(), b.arm.clone(), apart)
        })
        .collect()
}

/// The report's markdown (`plots_dir`: the plots' folder as the markdown links it).
pub fn markdown(inputs: &QuantInputs<'_>, plots_dir: &str) -> String {
    let arms = arms(inputs);
    let mut out = String::from("# Quantization and tool use\n\nGenerated by `rein eval report … --quantization` from the files below; do not edit by hand.\n\n");
    let tasks: std::collections::BTreeSet<&str> =
        inputs.records.iter().map(|r| r.task.as_str()).collect();
    let reps: std::collections::BTreeSet<u32> = inputs.records.iter().map(|r| r.rep).collect();
    let _ = writeln!(
        out,
        "{} tasks × {} repetition(s) per arm, {} runs in all. Model: {}. rein {}.\n",
        tasks.len(),
        reps.len(),
        inputs.records.len(),
        inputs.records.first().map_or("?", |r| r.model.as_str()),
        inputs
            .records
            .first()
            .map_or("?", |r| r.rein_version.as_str()),
    );
    out.push_str("## Commands\n\n```sh\n");
    for command in inputs.commands {
        let _ = writeln!(out, "{command}");
    }
    out.push_str("```\n\n## Arms\n\n");
    out.push_str("| arm | file type | KV | bits/weight | size (MiB) | solved (95% Wilson) | first-attempt compliance | commonest failures | prompt tokens/s | generated tokens/s | run time (min, runs added) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for arm in &arms {
        let failures: Vec<String> = arm
            .failures
            .iter()
            .map(|(class, count)| format!("{class} {count}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {}{} | {} | {:.2} | {} | {}/{} = {:.2} [{:.2}, {:.2}] | {} | {} | {} | {} | {:.1} |",
            arm.arm,
            arm.model_type,
            if arm.requantized { " (requantized)" } else { "" },
            arm.kv,
            arm.bits_per_weight,
            arm.speed
                .as_ref()
                .map_or("–".into(), |s| format!("{:.0}", s.file_size as f64 / 1048576.0)),
            arm.solved,
            arm.runs,
            arm.rate(),
            arm.interval[0],
            arm.interval[1],
            arm.compliance.map_or("–".into(), |c| format!("{c:.2}")),
            if failures.is_empty() { "–".into() } else { failures.join(", ") },
            arm.speed
                .as_ref()
                .map_or("–".into(), |s| format!("{}", s.prompt_tokens_per_s)),
            arm.speed
                .as_ref()
                .map_or("–".into(), |s| format!("{}", s.generated_tokens_per_s)),
            arm.wall_s / 60.0,
        );
    }
    let most = arms.iter().map(|a| a.runs).max().unwrap_or(0);
    let short: Vec<String> = arms
        .iter()
        .filter(|a| a.runs < most)
        .map(|a| format!("{} ({} of {most})", a.arm, a.runs))
        .collect();
    if !short.is_empty() {
        let _ = writeln!(
            out,
            "\nNot every arm has all its runs yet: {}. Their rates and intervals are over the runs they have.",
            short.join(", ")
        );
    }
    out.push_str("\n### Which neighbours the intervals separate\n\n");
    if arms.len() < 2 {
        out.push_str("Only one arm has runs so far.\n");
    }
    for (a, b, apart) in separations(&arms) {
        let _ = writeln!(
            out,
            "- {a} and {b}: {}",
            if apart {
                "separated"
            } else {
                "**not separated** (their intervals overlap)"
            }
        );
    }
    out.push_str("\n## Where the decisions part from the source\n\nEach arm read the source arm's recorded turns teacher-forced (every arm sees the same context); at the tokens that decide a call — the reply's first token (call or answer), the tool's name, each argument's first value token — KL(source ‖ arm) in nats and how often both put the same token first.\n\n");
    out.push_str("| model | file type | KV | arm | turns | decision | n | mean KL | median KL | p90 KL | top-1 agreement (95% Wilson) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for diff in inputs.divergence {
        let arm = arms
            .iter()
            .find(|a| a.divergence.as_ref() == Some(diff))
            .map_or("–", |a| a.arm.as_str());
        for kind in &diff.kinds {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {arm} | {} | {} |",
                diff.other,
                diff.other_type,
                diff.other_kv,
                diff.turns,
                kind.cells()
            );
        }
    }
    out.push_str("\n## Plots\n\n");
    for (file, alt) in plots::available(&arms, inputs.divergence) {
        let _ = writeln!(out, "![{alt}]({plots_dir}/{file}.svg)\n");
    }
    out.push_str("## Provenance\n\n| arm | file type | requantized | imatrix | sha256 |\n|---|---|---|---|---|\n");
    for arm in &arms {
        let _ = writeln!(
            out,
            "| {} | {} | {} | none | `{}` |",
            arm.arm,
            arm.model_type,
            if arm.requantized { "yes" } else { "no" },
            arm.sha256
        );
    }
    out
}

/// Writes the report to `path` and its plots as SVG into the folder beside it named
/// after it in lower case (`docs/QUANTIZATION.md` → `docs/quantization/`); returns
/// the files written.
pub fn write(inputs: &QuantInputs<'_>, path: &Path) -> Result<Vec<PathBuf>, EvalError> {
    if inputs.records.is_empty() {
        return Err(EvalError::Setting("no runs to report".into()));
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_else(|| "quantization".into());
    let dir = path.parent().unwrap_or(Path::new(".")).join(&stem);
    std::fs::create_dir_all(&dir).map_err(|source| EvalError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut written = plots::write(&arms(inputs), inputs.divergence, &dir)?;
    let text = markdown(inputs, &stem);
    rein_tools::write_atomically(path, text.as_bytes()).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    written.push(path.to_path_buf());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant_diff::KindSummary;
    use serde_json::json;

    fn record(arm: &str, model_type: &str, bits: f64, task: u32, solved: bool) -> RunRecord {
        serde_json::from_value(json!({
            "run_id": format!("{arm}/gen/{task}/0"), "arm": arm, "suite": "gen",
            "task": format!("{task}-x"), "tags": [], "rep": 0, "seed": 0, "model": "default",
            "model_sha256": format!("sha-{model_type}"), "model_type": model_type,
            "bits_per_weight": bits, "profile": "full", "kv": "f16", "rein_version": "0.1.0",
            "solved": solved, "grades": [], "compliance_first": 1.0,
            "compliance_recovered": 1.0, "turns": 2, "tool_calls": 1, "tool_errors": 0,
            "errors_by_class": {"not_an_answer": task % 2}, "prompt_tokens": 100,
            "completion_tokens": 10, "ttft_ms": 5, "wall_ms": 60_000,
            "stop_reason": "answered", "answer": "x", "trace": "t"
        }))
        .unwrap()
    }

    fn diff(other_type: &str, agreement: f64) -> QuantDiff {
        QuantDiff {
            reference: "default".into(),
            other: format!("default@{}", other_type.to_lowercase()),
            other_type: other_type.into(),
            other_kv: "f16".into(),
            other_sha256: format!("sha-{other_type}"),
            traces: 3,
            turns: 9,
            skipped: Vec::new(),
            skipped_turns: 0,
            kinds: vec![KindSummary {
                kind: "tool_name".into(),
                n: 10,
                mean_kl: 0.25,
                median_kl: 0.2,
                p90_kl: 0.5,
                top1_agreement: agreement,
                top1_interval: wilson((agreement * 10.0) as usize, 10),
            }],
        }
    }

    fn speed(file_type: &str, rate: f64) -> SpeedRow {
        SpeedRow {
            model: file_type.into(),
            file_type: file_type.into(),
            sha256: format!("sha-{file_type}"),
            file_size: 1 << 30,
            bits_per_weight: 5.0,
            prompt_tokens_per_s: 100.0,
            generated_tokens_per_s: rate,
            reps: 3,
        }
    }

    #[test]
    fn the_report_shows_every_arm_and_regenerates_byte_for_byte() {
        let mut records = Vec::new();
        for task in 0..20 {
            records.push(record("quant=source", "Q4_K_M", 5.03, task, task < 14));
            records.push(record("quant=q2_k", "Q2_K", 3.39, task, task < 3));
        }
        let divergence = [diff("Q2_K", 0.6)];
        let speed = [speed("Q4_K_M", 10.0), speed("Q2_K", 12.5)];
        let commands = ["rein eval --suite gen".to_string()];
        let inputs = QuantInputs {
            records: &records,
            divergence: &divergence,
            speed: &speed,
            commands: &commands,
        };
        let found = arms(&inputs);
        assert_eq!(found.len(), 2);
        assert!(!found[0].requantized && found[1].requantized);
        assert!(found[0].divergence.is_none() && found[1].divergence.is_some());
        assert_eq!(
            found[1].speed.as_ref().unwrap().generated_tokens_per_s,
            12.5
        );
        let text = markdown(&inputs, "quantization");
        for expected in [
            "| quant=source | Q4_K_M | f16 | 5.03 | 1024 | 14/20 = 0.70",
            "| quant=q2_k | Q2_K (requantized) |",
            "- quant=source and quant=q2_k: separated",
            "| default@q2_k | Q2_K | f16 | quant=q2_k | 9 | tool_name | 10 | 0.2500 |",
            "![Generated tokens per second against solved rate, Pareto front labelled](quantization/speed_vs_score.svg)",
            "| quant=q2_k | Q2_K | yes | none | `sha-Q2_K` |",
            "rein eval --suite gen",
        ] {
            assert!(text.contains(expected), "{expected}\n{text}");
        }

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("QUANTIZATION.md");
        let read_all = |files: &[PathBuf]| -> Vec<Vec<u8>> {
            files.iter().map(|f| std::fs::read(f).unwrap()).collect()
        };
        let first = write(&inputs, &path).unwrap();
        assert_eq!(first.len(), 4, "{first:?}");
        assert!(dir.path().join("quantization/score_vs_bits.svg").is_file());
        let before = read_all(&first);
        let again = write(&inputs, &path).unwrap();
        assert_eq!(first, again);
        assert!(
            before == read_all(&again),
            "the report changed when regenerated"
        );
        let svg = String::from_utf8(before[0].clone()).unwrap();
        assert!(svg.contains("q2_k 0.15"), "the value is on the plot");
    }

    #[test]
    fn overlapping_intervals_are_reported_as_not_separated() {
        let records: Vec<RunRecord> = (0..10)
            .flat_map(|task| {
                [
                    record("quant=source", "Q4_K_M", 5.03, task, task < 5),
                    record("quant=q3_k_m", "Q3_K_M", 4.16, task, task < 4),
                ]
            })
            .collect();
        let inputs = QuantInputs {
            records: &records,
            divergence: &[],
            speed: &[],
            commands: &[],
        };
        let text = markdown(&inputs, "q");
        assert!(
            text.contains("quant=source and quant=q3_k_m: **not separated**"),
            "{text}"
        );
        assert!(!text.contains("speed_vs_score"), "no speed, no speed plot");
    }

    #[test]
    fn arms_are_matched_by_file_and_kv_and_a_copy_of_the_source_type_is_still_requantized() {
        let mut kv_run = record("kv=q8_0", "Q4_K_M", 5.03, 0, true);
        kv_run.kv = "q8_0".into();
        let records = vec![
            record("quant=source", "Q4_K_M", 5.03, 0, true),
            // A copy made again in the source's own type: another file.
            RunRecord {
                model_sha256: "sha-copy".into(),
                ..record("quant=q4_k_m", "Q4_K_M", 5.03, 0, true)
            },
            kv_run,
        ];
        let mut kv_diff = diff("Q4_K_M", 0.9);
        kv_diff.other_kv = "q8_0".into();
        let divergence = [diff("Q4_K_M", 0.8), kv_diff];
        let speed = [speed("Q4_K_M", 10.0)];
        let inputs = QuantInputs {
            records: &records,
            divergence: &divergence,
            speed: &speed,
            commands: &[],
        };
        let found = arms(&inputs);
        // The source: no divergence of its own, its speed, not requantized.
        assert!(found[0].divergence.is_none() && found[0].speed.is_some());
        assert!(!found[0].requantized);
        // The copy: requantized; neither the source's comparison nor its speed.
        assert!(found[1].requantized);
        assert!(found[1].divergence.is_none() && found[1].speed.is_none());
        // The KV arm: the source file read with a q8_0 cache; no speed of its own.
        assert_eq!(found[2].divergence.as_ref().unwrap().other_kv, "q8_0");
        assert!(found[2].speed.is_none() && !found[2].requantized);
    }
}
