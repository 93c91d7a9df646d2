//! One run's line of `results.jsonl`, the metrics read from its trace, and reading
//! the file back (to resume an interrupted experiment or to rebuild a report).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::Path;

use rein_protocol::RunEvent as TraceEvent;
use serde::{Deserialize, Serialize};

use crate::grade::Grade;
use crate::EvalError;

/// Everything measured about one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// `<arm>/<suite>/<task>/<rep>`: unique within an experiment.
    pub run_id: String,
    /// The arm (`profile=full`), or `base` when nothing varies.
    pub arm: String,
    /// The suite.
    pub suite: String,
    /// The task.
    pub task: String,
    /// The task's failure-mode tags.
    pub tags: Vec<String>,
    /// The repetition (from 0).
    pub rep: u32,
    /// The run's base seed.
    pub seed: u32,
    /// The model's label (name or file).
    pub model: String,
    /// The model file's sha256.
    pub model_sha256: String,
    /// The model's file type (Q4_K_M…).
    pub model_type: String,
    /// File bits per parameter.
    pub bits_per_weight: f64,
    /// The harness profile.
    pub profile: String,
    /// The KV cache type.
    pub kv: String,
    /// rein's version.
    pub rein_version: String,
    /// Every grader passed.
    pub solved: bool,
    /// Each grader's verdict.
    pub grades: Vec<Grade>,
    /// Of the steps where the model meant to call a tool, the share whose first reply
    /// held only valid calls (none when it never tried).
    pub compliance_first: Option<f64>,
    /// The same share after the loop's recovery (the step's last reply).
    pub compliance_recovered: Option<f64>,
    /// Model turns (retries included).
    pub turns: u32,
    /// Tool calls run.
    pub tool_calls: u32,
    /// Tool calls that failed.
    pub tool_errors: u32,
    /// Failures by class (format, schema, unknown_tool, tool_failure…).
    pub errors_by_class: BTreeMap<String, u32>,
    /// How often each rule of the loop fired, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rules_fired: BTreeMap<String, u32>,
    /// Prompt tokens over all turns.
    pub prompt_tokens: u64,
    /// Generated tokens over all turns.
    pub completion_tokens: u64,
    /// Time to the first token of the first turn.
    pub ttft_ms: u64,
    /// Wall-clock time of the run.
    pub wall_ms: u64,
    /// Why the run stopped (or `harness_error`).
    pub stop_reason: String,
    /// The final answer.
    pub answer: Option<String>,
    /// The trace file, relative to the output directory.
    pub trace: String,
    /// What went wrong in the harness itself, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Failure classes that mean a reply's calls were not usable as written.
const CALL_FAILURES: [&str; 4] = ["format", "unknown_tool", "schema", "truncated"];

/// One model reply: whether it tried to call a tool and whether the call failed.
#[derive(Debug, Default, Clone, Copy)]
struct Reply {
    called: bool,
    failed: bool,
    /// rein repaired the call (its name or its markers) before it could run.
    repaired: bool,
    /// It failed for something other than naming a tool that does not exist.
    failed_otherwise: bool,
}

/// Tool-call compliance of a run: `(first attempt, after recovery)`, each the share
/// of steps (a reply and its retries) with a call attempt whose first reply held only
/// valid calls as written (no repair), or whose last reply held calls that ran
/// (after retries or repairs) — or, when the step's only failures were calls to tools
/// that do not exist, answered without a call; `None` when no step tried to call.
///
/// `valid` says whether a call that ran was valid as written (a known tool, arguments
/// that pass its schema): profiles without validation run invalid calls, and those
/// count as failures here.
pub fn compliance(
    events: &[TraceEvent],
    valid: impl Fn(&str, &serde_json::Value) -> bool,
) -> (Option<f64>, Option<f64>) {
    let mut steps: Vec<Vec<Reply>> = Vec::new();
    for event in events {
        match event {
            TraceEvent::Turn { attempt, .. } => {
                if *attempt <= 1 || steps.is_empty() {
                    steps.push(Vec::new());
                }
                if let Some(step) = steps.last_mut() {
                    step.push(Reply::default());
                }
            }
            TraceEvent::Calls { calls, .. } => {
                let all_valid = calls.iter().all(|call| {
                    valid(
                        call["name"].as_str().unwrap_or_default(),
                        &call["arguments"],
                    )
                });
                if let Some(reply) = steps.last_mut().and_then(|s| s.last_mut()) {
                    reply.called = true;
                    reply.failed |= !all_valid;
                    reply.failed_otherwise |= !all_valid;
                }
            }
            TraceEvent::FormatRepaired { .. } | TraceEvent::NameRepaired { .. } => {
                if let Some(reply) = steps.last_mut().and_then(|s| s.last_mut()) {
                    reply.repaired = true;
                }
            }
            // An empty reply attempted no call.
            TraceEvent::Recovery { class, detail, .. }
                if CALL_FAILURES.contains(&class.as_str()) && detail != rein_agent::EMPTY_REPLY =>
            {
                if let Some(reply) = steps.last_mut().and_then(|s| s.last_mut()) {
                    reply.called = true;
                    reply.failed = true;
                    reply.failed_otherwise |= class != "unknown_tool";
                }
            }
            _ => {}
        }
    }
    let tried: Vec<&Vec<Reply>> = steps
        .iter()
        .filter(|step| step.iter().any(|r| r.called))
        .collect();
    if tried.is_empty() {
        return (None, None);
    }
    let share = |good: usize| good as f64 / tried.len() as f64;
    let first = tried
        .iter()
        .filter(|s| {
            s.first()
                .is_some_and(|r| r.called && !r.failed && !r.repaired)
        })
        .count();
    // Recovered: the last reply's calls ran; or the step only ever called tools that
    // do not exist and its last reply answers without a call (a request no tool fits,
    // answered directly, is the right recovery from such a call).
    let recovered = |step: &[Reply]| match step.last() {
        Some(reply) if reply.called => !reply.failed,
        Some(_) => step.iter().all(|r| !r.failed_otherwise),
        None => false,
    };
    let last = tried.iter().filter(|step| recovered(step)).count();
    (Some(share(first)), Some(share(last)))
}

/// Reads every record of a results file (a missing file is empty; a torn last line,
/// left by an interrupted run, is skipped).
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>, EvalError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(EvalError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let lines: Vec<String> = std::io::BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|source| EvalError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let last = lines.len().saturating_sub(1);
    let mut records = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(record) => records.push(record),
            Err(_) if index == last => {
                tracing::warn!("{}: skipping a torn last line", path.display())
            }
            Err(e) => {
                return Err(EvalError::Results {
                    path: path.to_path_buf(),
                    reason: format!("line {}: {e}", index + 1),
                })
            }
        }
    }
    Ok(records)
}

/// The run ids already in a results file.
pub fn finished_runs(records: &[RunRecord]) -> BTreeSet<String> {
    records.iter().map(|r| r.run_id.clone()).collect()
}

/// Cuts a torn last line (left by an interrupted run) off a results file, so the
/// next record starts on a line of its own.
pub fn drop_torn_tail(path: &Path) -> Result<(), EvalError> {
    let io = |source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(io(source)),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io)?;
    file.set_len(keep as u64).map_err(io)
}

/// Appends one record as a line and flushes it, so a crash loses at most this run.
pub fn append_record(path: &Path, record: &RunRecord) -> Result<(), EvalError> {
    let io = |source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    };
    let line = serde_json::to_string(record).map_err(|e| EvalError::Results {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    file.write_all(format!("{line}\n").as_bytes()).map_err(io)?;
    file.sync_data().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(turn: u32, attempt: u32) -> TraceEvent {
        TraceEvent::Turn {
            turn,
            attempt,
            prompt_tokens: 10,
            reused_tokens: 0,
            completion_tokens: 5,
            max_tokens: 100,
            ttft_ms: 1,
            ms: 2,
            cut_off: false,
            raw: String::new(),
            prompt: None,
        }
    }

    fn calls(turn: u32) -> TraceEvent {
        TraceEvent::Calls {
            turn,
            calls: vec![json!({"name": "list_dir"})],
        }
    }

    fn failure(turn: u32, class: &str) -> TraceEvent {
        TraceEvent::Recovery {
            turn,
            class: class.into(),
            detail: String::new(),
            note: None,
        }
    }

    #[test]
    fn compliance_counts_first_replies_and_recovered_steps() {
        // Step 1: a clean call. Step 2: a format failure, then a clean call on retry.
        // Step 3: a plain answer (no call attempt: not counted).
        let events = [
            turn(1, 1),
            calls(1),
            turn(2, 1),
            failure(2, "format"),
            turn(3, 2),
            calls(3),
            turn(4, 1),
        ];
        assert_eq!(compliance(&events, |_, _| true), (Some(0.5), Some(1.0)));
        // A call that ran without validation but breaks its schema is not compliant.
        assert_eq!(
            compliance(&[turn(1, 1), calls(1)], |_, _| false),
            (Some(0.0), Some(0.0))
        );
        assert_eq!(compliance(&[turn(1, 1)], |_, _| true), (None, None));
        // A repaired call counts after recovery, not on first attempt.
        let repaired = [
            turn(1, 1),
            TraceEvent::FormatRepaired {
                turn: 1,
                detail: String::new(),
            },
            calls(1),
        ];
        assert_eq!(compliance(&repaired, |_, _| true), (Some(0.0), Some(1.0)));
        // A call to a tool that does not exist, then a direct answer: recovered. A
        // format failure, then an answer: not.
        let answered =
            |class: &str| compliance(&[turn(1, 1), failure(1, class), turn(2, 2)], |_, _| true);
        assert_eq!(answered("unknown_tool"), (Some(0.0), Some(1.0)));
        assert_eq!(answered("format"), (Some(0.0), Some(0.0)));
        // An empty reply retried as a format failure attempted no call.
        let mut empty = failure(1, "format");
        if let TraceEvent::Recovery { detail, .. } = &mut empty {
            *detail = rein_agent::EMPTY_REPLY.to_string();
        }
        assert_eq!(compliance(&[turn(1, 1), empty], |_, _| true), (None, None));
        // A tool that ran and failed is not a call-format failure.
        assert_eq!(
            compliance(
                &[turn(1, 1), calls(1), failure(1, "tool_failure")],
                |_, _| true
            ),
            (Some(1.0), Some(1.0))
        );
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_append_starts_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let record: RunRecord = serde_json::from_value(json!({
            "run_id": "base/s/t/0", "arm": "base", "suite": "s", "task": "t", "tags": [],
            "rep": 0, "seed": 0, "model": "tiny", "model_sha256": "", "model_type": "Q4_1",
            "bits_per_weight": 5.0, "profile": "full", "kv": "f16", "rein_version": "0",
            "solved": true, "grades": [], "compliance_first": null,
            "compliance_recovered": null, "turns": 1, "tool_calls": 0, "tool_errors": 0,
            "errors_by_class": {}, "prompt_tokens": 1, "completion_tokens": 1, "ttft_ms": 1,
            "wall_ms": 1, "stop_reason": "answered", "answer": "x", "trace": "t.jsonl"
        }))
        .unwrap();
        append_record(&path, &record).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"run_id\": \"ba")
            .unwrap();
        assert_eq!(read_records(&path).unwrap().len(), 1);
        drop_torn_tail(&path).unwrap();
        let mut second = record.clone();
        second.run_id = "base/s/t/1".into();
        append_record(&path, &second).unwrap();
        let records = read_records(&path).unwrap();
        assert_eq!(finished_runs(&records).len(), 2);
        // A broken line in the middle is an error, not silently dropped.
        std::fs::write(&path, "{}\n{\"run_id\": 1}\n").unwrap();
        assert!(read_records(&path).is_err());
    }
}
