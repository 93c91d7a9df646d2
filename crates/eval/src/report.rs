//! Reports: per arm, each metric averaged within a repetition, then its mean,
//! standard deviation, min and max over repetitions; per suite and per failure-mode
//! tag; as markdown for people and JSON for machines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::record::RunRecord;

/// Mean, sample standard deviation, min and max of one metric over repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// The mean.
    pub mean: f64,
    /// The sample standard deviation (0 for one value).
    pub std: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// How many values (repetitions).
    pub n: usize,
}

impl Stat {
    /// The statistics of `values` (`None` when empty).
    pub fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let std = if n > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Stat {
            mean,
            std,
            min,
            max,
            n,
        })
    }
}

/// The metrics reported for every arm, in table order.
pub const METRICS: [&str; 11] = [
    "solved",
    "compliance_first",
    "compliance_recovered",
    "turns",
    "tool_calls",
    "tool_errors",
    "prompt_tokens",
    "completion_tokens",
    "ttft_ms",
    "wall_s",
    "harness_errors",
];

/// One metric of one run (`None`: not defined for it, e.g. compliance without calls).
fn metric(record: &RunRecord, name: &str) -> Option<f64> {
    match name {
        "solved" => Some(if record.solved { 1.0 } else { 0.0 }),
        "compliance_first" => record.compliance_first,
        "compliance_recovered" => record.compliance_recovered,
        "turns" => Some(f64::from(record.turns)),
        "tool_calls" => Some(f64::from(record.tool_calls)),
        "tool_errors" => Some(f64::from(record.tool_errors)),
        "prompt_tokens" => Some(record.prompt_tokens as f64),
        "completion_tokens" => Some(record.completion_tokens as f64),
        "ttft_ms" => Some(record.ttft_ms as f64),
        "wall_s" => Some(record.wall_ms as f64 / 1000.0),
        "harness_errors" => Some(if record.error.is_some() { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// `name` averaged within each repetition, then summarized over repetitions.
fn over_reps<'a>(records: impl Iterator<Item = &'a RunRecord>, name: &str) -> Option<Stat> {
    let mut by_rep: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for record in records {
        if let Some(value) = metric(record, name) {
            by_rep.entry(record.rep).or_default().push(value);
        }
    }
    let means: Vec<f64> = by_rep
        .values()
        .map(|v| v.iter().sum::<f64>() / v.len() as f64)
        .collect();
    Stat::of(&means)
}

/// Everything reported about one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    /// The arm.
    pub arm: String,
    /// The model label(s).
    pub model: String,
    /// The model file type(s).
    pub model_type: String,
    /// File bits per weight.
    pub bits_per_weight: f64,
    /// The profile.
    pub profile: String,
    /// The KV cache type.
    pub kv: String,
    /// Runs recorded.
    pub runs: usize,
    /// Runs solved.
    pub solved_runs: usize,
    /// Each metric over repetitions.
    pub metrics: BTreeMap<String, Stat>,
    /// The solved rate per suite.
    pub per_suite: BTreeMap<String, Stat>,
    /// The solved rate per failure-mode tag.
    pub per_tag: BTreeMap<String, Stat>,
    /// Generated + prompt tokens over all runs divided by solved runs.
    pub tokens_per_solved: Option<f64>,
    /// Runs per stop reason.
    pub stop_reasons: BTreeMap<String, usize>,
    /// Failures per class over all runs.
    pub errors_by_class: BTreeMap<String, u64>,
    /// Per rule of the loop that fired: in how many runs, and how many of those and
    /// of the others were solved.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rules: BTreeMap<String, RuleFirings>,
}

/// How one rule fared in one arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleFirings {
    /// Times it fired over all runs.
    pub fired: u64,
    /// Runs it fired in.
    pub runs: usize,
    /// Of those, solved.
    pub solved: usize,
    /// Runs it did not fire in, solved.
    pub solved_without: usize,
    /// Runs it did not fire in.
    pub runs_without: usize,
}

/// A whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// rein's version(s) in the records.
    pub rein_version: String,
    /// The suites covered.
    pub suites: Vec<String>,
    /// Distinct tasks.
    pub tasks: usize,
    /// Repetitions (the most seen for any run).
    pub reps: u32,
    /// Models by label with their sha256.
    pub models: BTreeMap<String, String>,
    /// One summary per arm, in first-seen order.
    pub arms: Vec<ArmSummary>,
}

fn joined<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let set: BTreeSet<&str> = values.collect();
    set.into_iter().collect::<Vec<_>>().join(", ")
}

/// Summarizes records.
pub fn build(records: &[RunRecord]) -> Report {
    let mut arm_names: Vec<&str> = Vec::new();
    for record in records {
        if !arm_names.contains(&record.arm.as_str()) {
            arm_names.push(&record.arm);
        }
    }
    let arms = arm_names
        .iter()
        .map(|name| {
            let of_arm: Vec<&RunRecord> = records.iter().filter(|r| r.arm == *name).collect();
            summarize(name, &of_arm)
        })
        .collect();
    Report {
        rein_version: joined(records.iter().map(|r| r.rein_version.as_str())),
        suites: records
            .iter()
            .map(|r| r.suite.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        tasks: records
            .iter()
            .map(|r| (&r.suite, &r.task))
            .collect::<BTreeSet<_>>()
            .len(),
        reps: records.iter().map(|r| r.rep + 1).max().unwrap_or(0),
        models: records
            .iter()
            .map(|r| (r.model.clone(), r.model_sha256.clone()))
            .collect(),
        arms,
    }
}

fn summarize(name: &str, records: &[&RunRecord]) -> ArmSummary {
    let metrics = METRICS
        .iter()
        .filter_map(|m| over_reps(records.iter().copied(), m).map(|s| (m.to_string(), s)))
        .collect();
    let mut per_suite = BTreeMap::new();
    for suite in records.iter().map(|r| &r.suite).collect::<BTreeSet<_>>() {
        if let Some(stat) = over_reps(
            records.iter().copied().filter(|r| &r.suite == suite),
            "solved",
        ) {
            per_suite.insert(suite.clone(), stat);
        }
    }
    let mut per_tag = BTreeMap::new();
    for tag in records
        .iter()
        .flat_map(|r| &r.tags)
        .collect::<BTreeSet<_>>()
    {
        if let Some(stat) = over_reps(
            records.iter().copied().filter(|r| r.tags.contains(tag)),
            "solved",
        ) {
            per_tag.insert(tag.clone(), stat);
        }
    }
    let solved_runs = records.iter().filter(|r| r.solved).count();
    let tokens: u64 = records
        .iter()
        .map(|r| r.prompt_tokens + r.completion_tokens)
        .sum();
    let mut stop_reasons = BTreeMap::new();
    let mut errors_by_class = BTreeMap::new();
    for record in records {
        *stop_reasons.entry(record.stop_reason.clone()).or_insert(0) += 1;
        for (class, count) in &record.errors_by_class {
            *errors_by_class.entry(class.clone()).or_insert(0) += u64::from(*count);
        }
    }
    let mut rules: BTreeMap<String, RuleFirings> = BTreeMap::new();
    for name in records
        .iter()
        .flat_map(|r| r.rules_fired.keys())
        .collect::<BTreeSet<_>>()
    {
        let (with, without): (Vec<&&RunRecord>, Vec<&&RunRecord>) = records
            .iter()
            .partition(|r| r.rules_fired.contains_key(name));
        rules.insert(
            name.clone(),
            RuleFirings {
                fired: with.iter().map(|r| u64::from(r.rules_fired[name])).sum(),
                runs: with.len(),
                solved: with.iter().filter(|r| r.solved).count(),
                runs_without: without.len(),
                solved_without: without.iter().filter(|r| r.solved).count(),
            },
        );
    }
    let bits: Vec<f64> = records.iter().map(|r| r.bits_per_weight).collect();
    ArmSummary {
        arm: name.to_string(),
        model: joined(records.iter().map(|r| r.model.as_str())),
        model_type: joined(records.iter().map(|r| r.model_type.as_str())),
        bits_per_weight: bits.iter().sum::<f64>() / bits.len().max(1) as f64,
        profile: joined(records.iter().map(|r| r.profile.as_str())),
        kv: joined(records.iter().map(|r| r.kv.as_str())),
        runs: records.len(),
        solved_runs,
        metrics,
        per_suite,
        per_tag,
        tokens_per_solved: (solved_runs > 0).then(|| tokens as f64 / solved_runs as f64),
        stop_reasons,
        errors_by_class,
        rules,
    }
}

fn cell(stat: Option<&Stat>, digits: usize) -> String {
    match stat {
        None => "–".into(),
        Some(s) if s.n == 1 => format!("{:.*}", digits, s.mean),
        Some(s) => format!(
            "{:.*} ± {:.*} [{:.*}–{:.*}]",
            digits, s.mean, digits, s.std, digits, s.min, digits, s.max
        ),
    }
}

/// The report as markdown: the arms table, then per suite, per tag, failure classes
/// and stop reasons.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# rein eval report\n");
    let _ = writeln!(
        out,
        "rein {} · suites: {} · {} tasks · {} repetition(s)\n",
        report.rein_version,
        report.suites.join(", "),
        report.tasks,
        report.reps
    );
    for (model, sha) in &report.models {
        let _ = writeln!(out, "- model `{model}`: sha256 `{sha}`");
    }
    let _ = writeln!(
        out,
        "\nEach cell: mean ± standard deviation [min–max] over repetitions of the per-repetition mean.\n"
    );
    let _ = writeln!(out, "## Arms\n");
    let _ = writeln!(out, "| arm | model | bits/weight | runs | solved | compliance (first) | compliance (recovered) | turns | tool calls | tool errors | prompt tokens | completion tokens | TTFT ms | wall s | tokens/solved |");
    let _ = writeln!(
        out,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for arm in &report.arms {
        let m = |name: &str, digits| cell(arm.metrics.get(name), digits);
        let _ =
            writeln!(
            out,
            "| {} | {} ({}) | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            arm.arm,
            arm.model,
            arm.model_type,
            arm.bits_per_weight,
            arm.runs,
            m("solved", 2),
            m("compliance_first", 2),
            m("compliance_recovered", 2),
            m("turns", 1),
            m("tool_calls", 1),
            m("tool_errors", 1),
            m("prompt_tokens", 0),
            m("completion_tokens", 0),
            m("ttft_ms", 0),
            m("wall_s", 1),
            arm.tokens_per_solved.map(|t| format!("{t:.0}")).unwrap_or_else(|| "–".into()),
        );
    }
    breakdown(&mut out, "Solved by suite", report, |a| &a.per_suite);
    breakdown(&mut out, "Solved by failure mode (tag)", report, |a| {
        &a.per_tag
    });
    let _ = writeln!(out, "\n## Failures and stop reasons\n");
    let _ = writeln!(out, "| arm | failures by class | stop reasons |");
    let _ = writeln!(out, "|---|---|---|");
    for arm in &report.arms {
        let classes: Vec<String> = arm
            .errors_by_class
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let stops: Vec<String> = arm
            .stop_reasons
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            arm.arm,
            if classes.is_empty() {
                "none".into()
            } else {
                classes.join(", ")
            },
            stops.join(", ")
        );
    }
    rules_table(&mut out, report);
    out
}

/// Per arm, each rule that fired: times, runs, and the solved share of the runs it
/// fired in against the others. Which way a rule pays is told by an arm with it
/// switched off (`--ab rule.NAME=on,off`), not by this table alone: a rule fires in
/// runs that were going wrong.
fn rules_table(out: &mut String, report: &Report) {
    if report.arms.iter().all(|arm| arm.rules.is_empty()) {
        return;
    }
    let _ = writeln!(out, "\n## Rules that fired\n");
    let _ = writeln!(
        out,
        "| arm | rule | fired | runs | solved (runs it fired in) | solved (other runs) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let share = |solved: usize, runs: usize| match runs {
        0 => "–".to_string(),
        _ => format!("{solved}/{runs} = {:.2}", solved as f64 / runs as f64),
    };
    for arm in &report.arms {
        for (name, rule) in &arm.rules {
            let _ = writeln!(
                out,
                "| {} | {name} | {} | {} | {} | {} |",
                arm.arm,
                rule.fired,
                rule.runs,
                share(rule.solved, rule.runs),
                share(rule.solved_without, rule.runs_without)
            );
        }
    }
}

fn breakdown(
    out: &mut String,
    title: &str,
    report: &Report,
    rows_of: impl Fn(&ArmSummary) -> &BTreeMap<String, Stat>,
) {
    let rows: BTreeSet<&String> = report.arms.iter().flat_map(|a| rows_of(a).keys()).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## {title}\n");
    let header: Vec<&str> = report.arms.iter().map(|a| a.arm.as_str()).collect();
    let _ = writeln!(out, "| | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(header.len()));
    for row in rows {
        let cells: Vec<String> = report
            .arms
            .iter()
            .map(|a| cell(rows_of(a).get(row), 2))
            .collect();
        let _ = writeln!(out, "| {row} | {} |", cells.join(" | "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(arm: &str, task: &str, rep: u32, solved: bool, tags: &[&str]) -> RunRecord {
        serde_json::from_value(json!({
            "run_id": format!("{arm}/s/{task}/{rep}"), "arm": arm, "suite": "s", "task": task,
            "tags": tags, "rep": rep, "seed": rep, "model": "tiny", "model_sha256": "ab",
            "model_type": "Q4_1", "bits_per_weight": 5.5, "profile": "full", "kv": "f16",
            "rein_version": "0.1.0", "solved": solved, "grades": [],
            "compliance_first": if solved { json!(1.0) } else { json!(null) },
            "compliance_recovered": null, "turns": 2, "tool_calls": 1, "tool_errors": 0,
            "errors_by_class": {"format": 1}, "prompt_tokens": 100, "completion_tokens": 10,
            "ttft_ms": 5, "wall_ms": 1500, "stop_reason": "answered", "answer": "x",
            "trace": "t"
        }))
        .unwrap()
    }

    #[test]
    fn solved_rate_is_averaged_per_rep_then_over_reps() {
        // Rep 0: 2/2 solved; rep 1: 1/2 solved → mean 0.75, std of (1, 0.5).
        let records = vec![
            record("a", "t1", 0, true, &["fifo"]),
            record("a", "t2", 0, true, &["case"]),
            record("a", "t1", 1, true, &["fifo"]),
            record("a", "t2", 1, false, &["case"]),
            record("b", "t1", 0, false, &["fifo"]),
        ];
        let report = build(&records);
        assert_eq!(report.arms.len(), 2);
        let a = &report.arms[0];
        let solved = a.metrics["solved"];
        assert!((solved.mean - 0.75).abs() < 1e-9);
        assert!((solved.std - (0.125f64).sqrt()).abs() < 1e-9);
        assert_eq!((solved.min, solved.max, solved.n), (0.5, 1.0, 2));
        assert_eq!(a.per_tag["case"].mean, 0.5);
        assert_eq!(a.per_tag["fifo"].mean, 1.0);
        assert_eq!(a.errors_by_class["format"], 4);
        assert_eq!(a.tokens_per_solved, Some(440.0 / 3.0));
        assert_eq!(report.arms[1].tokens_per_solved, None);
        // Compliance counts only runs where it is defined.
        assert_eq!(a.metrics["compliance_first"].mean, 1.0);
        let text = markdown(&report);
        assert!(
            text.contains("| a | tiny (Q4_1) | 5.50 | 4 | 0.75 ± 0.35 [0.50–1.00]"),
            "{text}"
        );
        assert!(text.contains("## Solved by failure mode (tag)"));
        assert!(!text.contains("## Rules that fired"));
    }

    #[test]
    fn each_rule_that_fired_is_counted_with_the_solved_share_of_its_runs() {
        let mut records = vec![
            record("a", "t1", 0, true, &[]),
            record("a", "t2", 0, false, &[]),
            record("a", "t3", 0, true, &[]),
        ];
        records[0].rules_fired.insert("no_path".into(), 2);
        records[1].rules_fired.insert("no_path".into(), 1);
        let report = build(&records);
        let rule = report.arms[0].rules["no_path"];
        assert_eq!(
            rule,
            RuleFirings {
                fired: 3,
                runs: 2,
                solved: 1,
                solved_without: 1,
                runs_without: 1
            }
        );
        let text = markdown(&report);
        assert!(
            text.contains("| a | no_path | 3 | 2 | 1/2 = 0.50 | 1/1 = 1.00 |"),
            "{text}"
        );
    }
}
