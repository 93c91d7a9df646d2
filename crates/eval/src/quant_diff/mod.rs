//! Where a quantization bends the model's decisions: the prompts and replies recorded
//! in one model's traces are read teacher-forced by that model and by another (a
//! quantization of it), and their next-token distributions are compared at the tokens
//! that decide a call — call or answer, the tool's name, each argument's first value
//! token — as KL divergence and top-1 agreement per decision kind.

mod decisions;
mod divergence;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rein_protocol::RecordedPrompt;
use serde::{Deserialize, Serialize};

pub use decisions::{decisions, replay_turns, Decision, DecisionKind, ReplayTurn};
pub use divergence::{compare, Divergence};

use crate::EvalError;

/// A model that reads a recorded prompt and reply teacher-forced.
pub trait TeacherForcing {
    /// For each of `bytes` (byte offsets of `reply`), the index of the reply's token
    /// that spells it and the logits before that token, the prompt and the reply's
    /// earlier tokens read first; in the order of `bytes`. Why not, when the turn
    /// cannot be read.
    fn logits(
        &mut self,
        prompt: &RecordedPrompt,
        reply: &str,
        bytes: &[usize],
    ) -> Result<Vec<(usize, Vec<f32>)>, String>;
}

/// One decision kind summarized over every replayed turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindSummary {
    /// The kind (`call_or_answer`, `tool_name`, `argument_value`).
    pub kind: String,
    /// Decision tokens compared.
    pub n: usize,
    /// Mean KL(reference ‖ other) in nats.
    pub mean_kl: f64,
    /// Median KL.
    pub median_kl: f64,
    /// 90th percentile of KL.
    pub p90_kl: f64,
    /// Share of decisions where both models put the same token first.
    pub top1_agreement: f64,
    /// The 95% Wilson interval of that share.
    pub top1_interval: [f64; 2],
}

impl KindSummary {
    /// The row's cells from the kind on, for markdown tables: kind, n, mean, median
    /// and p90 KL, top-1 agreement with its interval.
    pub fn cells(&self) -> String {
        format!(
            "{} | {} | {:.4} | {:.4} | {:.4} | {:.3} [{:.3}, {:.3}]",
            self.kind,
            self.n,
            self.mean_kl,
            self.median_kl,
            self.p90_kl,
            self.top1_agreement,
            self.top1_interval[0],
            self.top1_interval[1]
        )
    }
}

/// The comparison of two models over a directory of traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuantDiff {
    /// The reference model (the one whose traces were replayed).
    pub reference: String,
    /// The model compared with it.
    pub other: String,
    /// The compared model's GGUF file type (`Q3_K_M`, …), when known: how the
    /// quantization report finds its arm.
    #[serde(default)]
    pub other_type: String,
    /// The KV cache type it read with (`f16`, `q8_0`, `q4_0`).
    #[serde(default)]
    pub other_kv: String,
    /// The compared model file's sha256: how the report finds its arm (by file type
    /// when empty).
    #[serde(default)]
    pub other_sha256: String,
    /// Trace files read.
    pub traces: usize,
    /// Turns replayed.
    pub turns: usize,
    /// Turns that could not be replayed, with why (the first few).
    pub skipped: Vec<String>,
    /// How many turns were skipped.
    pub skipped_turns: usize,
    /// Per decision kind, in report order.
    pub kinds: Vec<KindSummary>,
}

/// Every trace file (`*.jsonl`) under `dir`, sorted; under its `traces/` folder when
/// it has one (an eval output directory), which must then hold one arm's traces.
pub fn trace_files(dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
    let traces = dir.join("traces");
    let root = if traces.is_dir() {
        let arms: Vec<String> = read_dir(&traces)?
            .into_iter()
            .filter(|p| p.is_dir())
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .collect();
        if let [arm] = arms.as_slice() {
            traces.join(arm)
        } else {
            return Err(EvalError::Setting(format!(
                "{} holds the traces of {} arms ({}): pass the folder of the one that recorded its prompts, e.g. {}",
                traces.display(),
                arms.len(),
                arms.join(", "),
                traces.join(arms.first().map_or("ARM", String::as_str)).display()
            )));
        }
    } else {
        dir.to_path_buf()
    };
    let mut found = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for path in read_dir(&dir)? {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The entries of `dir`.
fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
    let io = |source| EvalError::Io {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::read_dir(dir)
        .map_err(io)?
        .map(|entry| entry.map(|e| e.path()).map_err(io))
        .collect()
}

/// One model compared with the reference: its name and its reader.
pub struct Compared<'a> {
    /// How the report names it.
    pub name: String,
    /// Its GGUF file type.
    pub file_type: String,
    /// Its file's sha256.
    pub sha256: String,
    /// The KV cache type it reads with.
    pub kv: String,
    /// Its teacher-forced reader.
    pub model: &'a mut dyn TeacherForcing,
}

/// What one compared model has gathered so far.
#[derive(Default)]
struct Tally {
    by_kind: BTreeMap<DecisionKind, Vec<Divergence>>,
    turns: usize,
    skipped_turns: usize,
    skipped: Vec<String>,
}

impl Tally {
    fn skip(&mut self, file: &Path, turn: &ReplayTurn, reason: &str) {
        self.skipped_turns += 1;
        if self.skipped.len() < 5 {
            self.skipped.push(format!(
                "{} turn {} attempt {}: {reason}",
                file.display(),
                turn.turn,
                turn.attempt
            ));
        }
    }
}

/// Replays the recorded turns of `files` on `reference` and on each of `others`, and
/// compares each with the reference at every decision token (the reference reads
/// each turn once); at most `max_turns` turns in all when given. `progress` hears of
/// each trace as it is done (turns replayed so far). One comparison per other model.
pub fn run(
    files: &[PathBuf],
    reference: (&str, &mut dyn TeacherForcing),
    others: &mut [Compared<'_>],
    max_turns: Option<usize>,
    progress: &mut dyn FnMut(&Path, usize),
) -> Result<Vec<QuantDiff>, EvalError> {
    let (reference_name, reference) = reference;
    let mut tallies: Vec<Tally> = others.iter().map(|_| Tally::default()).collect();
    let (mut replayed, mut traces) = (0, 0);
    'files: for file in files {
        // A file that is not a trace (a results file among them) is passed over.
        let Ok(events) = rein_protocol::read_trace(file) else {
            continue;
        };
        traces += 1;
        for turn in replay_turns(&events) {
            if max_turns.is_some_and(|most| replayed >= most) {
                break 'files;
            }
            let found = turn.decisions();
            if found.is_empty() {
                continue;
            }
            replayed += 1;
            let bytes: Vec<usize> = found.iter().map(|d| d.byte).collect();
            let expected = match reference.logits(&turn.prompt, &turn.reply, &bytes) {
                Ok(read) => read,
                Err(reason) => {
                    for tally in &mut tallies {
                        tally.skip(file, &turn, &reason);
                    }
                    continue;
                }
            };
            // A token that decides two things (a reply opening with the tool's name)
            // counts once, as the first.
            let mut seen = std::collections::BTreeSet::new();
            let keep: Vec<bool> = expected
                .iter()
                .map(|(index, _)| seen.insert(*index))
                .collect();
            let kinds: Vec<DecisionKind> = found
                .iter()
                .zip(&keep)
                .filter(|(_, kept)| **kept)
                .map(|(decision, _)| decision.kind)
                .collect();
            let rows = |read: Vec<(usize, Vec<f32>)>| -> Vec<Vec<f32>> {
                read.into_iter()
                    .zip(&keep)
                    .filter(|(_, kept)| **kept)
                    .map(|((_, logits), _)| logits)
                    .collect()
            };
            let expected = rows(expected);
            for (other, tally) in others.iter_mut().zip(&mut tallies) {
                let compared = other
                    .model
                    .logits(&turn.prompt, &turn.reply, &bytes)
                    .and_then(|read| compare(&expected, &rows(read)));
                match compared {
                    Ok(divergences) => {
                        tally.turns += 1;
                        for (kind, divergence) in kinds.iter().zip(divergences) {
                            tally.by_kind.entry(*kind).or_default().push(divergence);
                        }
                    }
                    Err(reason) => tally.skip(file, &turn, &reason),
                }
            }
        }
        progress(file, replayed);
    }
    Ok(others
        .iter()
        .zip(tallies)
        .map(|(other, tally)| QuantDiff {
            reference: reference_name.to_string(),
            other: other.name.clone(),
            other_type: other.file_type.clone(),
            other_kv: other.kv.clone(),
            other_sha256: other.sha256.clone(),
            traces,
            turns: tally.turns,
            skipped: tally.skipped,
            skipped_turns: tally.skipped_turns,
            kinds: DecisionKind::ALL
                .iter()
                .filter_map(|kind| Some(summarize(*kind, tally.by_kind.get(kind)?)))
                .collect(),
        })
        .collect())
}

/// The summary of one kind's comparisons (at least one).
fn summarize(kind: DecisionKind, found: &[Divergence]) -> KindSummary {
    // KL is never below 0; rounding can put an identical pair a hair under it.
    let mut kl: Vec<f64> = found.iter().map(|d| d.kl.max(0.0)).collect();
    kl.sort_by(f64::total_cmp);
    let quantile = |q: f64| kl[((kl.len() - 1) as f64 * q).round() as usize];
    let agree = found.iter().filter(|d| d.agrees()).count();
    KindSummary {
        kind: kind.as_str().to_string(),
        n: found.len(),
        mean_kl: kl.iter().sum::<f64>() / kl.len() as f64,
        median_kl: quantile(0.5),
        p90_kl: quantile(0.9),
        top1_agreement: agree as f64 / found.len() as f64,
        top1_interval: wilson(agree, found.len()),
    }
}

/// The 95% Wilson score interval of `successes` out of `n` (`[0, 1]` when `n` is 0).
pub fn wilson(successes: usize, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (z, n_f) = (1.959_964, n as f64);
    let p = successes as f64 / n_f;
    let denominator = 1.0 + z * z / n_f;
    let centre = (p + z * z / (2.0 * n_f)) / denominator;
    let half = z * (p * (1.0 - p) / n_f + z * z / (4.0 * n_f * n_f)).sqrt() / denominator;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

/// The comparisons as one markdown table, a row per model and decision kind.
pub fn markdown(diffs: &[QuantDiff]) -> String {
    let Some(first) = diffs.first() else {
        return String::new();
    };
    let mut out = format!(
        "Against {}, teacher-forced on its recorded turns ({} traces):\n\n| model | turns | decision | n | mean KL (nats) | median KL | p90 KL | top-1 agreement (95% Wilson) |\n|---|---|---|---|---|---|---|---|\n",
        first.reference, first.traces
    );
    for diff in diffs {
        for kind in &diff.kinds {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                diff.other,
                diff.turns,
                kind.cells()
            );
        }
    }
    for diff in diffs.iter().filter(|d| d.skipped_turns > 0) {
        let _ = write!(
            out,
            "\n{}: {} turns skipped",
            diff.other, diff.skipped_turns
        );
        for reason in &diff.skipped {
            let _ = write!(out, "\n- {reason}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_are_the_published_ones() {
        // 8 of 30: [0.142, 0.444] (the interval docs/BENCHMARKS.md quotes).
        let [low, high] = wilson(8, 30);
        assert!(
            (low - 0.142).abs() < 0.001 && (high - 0.444).abs() < 0.001,
            "{low} {high}"
        );
        assert_eq!(wilson(0, 0), [0.0, 1.0]);
        let [low, high] = wilson(10, 10);
        assert!(
            (low - 0.722).abs() < 0.001 && (high - 1.0).abs() < 1e-9,
            "{low} {high}"
        );
    }

    #[test]
    fn summaries_take_quantiles_and_agreement() {
        let found: Vec<Divergence> = (0..10)
            .map(|i| Divergence {
                kl: i as f64 / 10.0,
                top_reference: 1,
                top_other: if i < 7 { 1 } else { 2 },
            })
            .collect();
        let summary = summarize(DecisionKind::ToolName, &found);
        assert_eq!(summary.n, 10);
        assert!((summary.mean_kl - 0.45).abs() < 1e-9);
        assert!((summary.median_kl - 0.5).abs() < 1e-9);
        assert!((summary.p90_kl - 0.8).abs() < 1e-9);
        assert!((summary.top1_agreement - 0.7).abs() < 1e-9);
    }
}
