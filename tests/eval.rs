//! `rein eval` and `rein models quantize` end to end on the tiny model: a smoke run of
//! every suite (runner, graders, reports, plots), resume, an A/B experiment, and a
//! quantization ladder step that loads and runs as an arm.

use std::path::Path;

use serde_json::Value;

use crate::support::{rein, stderr, stdout, tiny_model};

fn evals_dir() -> String {
    format!("{}/evals", env!("CARGO_MANIFEST_DIR"))
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// `rein eval` arguments for an A/B over `ab` on the first `calls` task, one rep.
fn one_task_ab(model: &str, ab: &str, out: &Path) -> Vec<String> {
    [
        "eval",
        "--suite",
        "calls",
        "--model",
        model,
        "--ab",
        ab,
        "--reps",
        "1",
        "--limit",
        "1",
        "--out",
        &out.display().to_string(),
        "--evals-dir",
        &evals_dir(),
    ]
    .map(String::from)
    .to_vec()
}

fn assert_report(out: &Path, arms: usize) {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["arms"].as_array().unwrap().len(), arms, "{report}");
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(markdown.contains("| arm | model |"), "{markdown}");
    for plot in [
        "score_by_arm",
        "score_vs_bits_per_weight",
        "tokens_per_solved",
    ] {
        let svg = std::fs::read_to_string(out.join(format!("{plot}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{plot}.svg");
        let png = std::fs::read(out.join(format!("{plot}.png"))).unwrap();
        assert_eq!(&png[..4], b"\x89PNG", "{plot}.png");
    }
}

#[test]
fn every_suite_loads_and_has_enough_tasks() {
    let output = rein(&["eval", "list", "--evals-dir", &evals_dir()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let mut total = 0;
    for suite in ["traps", "calls", "multistep"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{suite} (")))
            .unwrap_or_else(|| panic!("no suite {suite} in {text}"));
        let count: usize = line
            .split(['(', ' '])
            .find_map(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no count in {line}"));
        total += count;
    }
    assert!(total >= 40, "{total} tasks:\n{text}");
}

#[test]
fn a_smoke_run_of_every_suite_writes_results_report_and_plots_and_resumes() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("smoke");
    let out_arg = out.to_str().unwrap().to_string();
    let evals = evals_dir();
    let args = [
        "eval",
        "--suite",
        "traps,calls,multistep",
        "--model",
        "tiny",
        "--no-pull",
        "--reps",
        "1",
        "--limit",
        "2",
        "--out",
        &out_arg,
        "--evals-dir",
        &evals,
    ];
    let output = rein(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 6, "two tasks of each of three suites");
    for record in &records {
        assert!(record["error"].is_null(), "harness error: {record}");
        assert!(!record["grades"].as_array().unwrap().is_empty(), "{record}");
        assert!(record["turns"].as_u64().unwrap() >= 1, "{record}");
        let trace = out.join(record["trace"].as_str().unwrap());
        assert!(trace.is_file(), "{}", trace.display());
    }
    let suites: std::collections::BTreeSet<&str> = records
        .iter()
        .map(|r| r["suite"].as_str().unwrap())
        .collect();
    assert_eq!(suites.len(), 3);
    assert_report(&out, 1);

    // The same command again finds every run done and adds nothing.
    let again = rein(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 6);

    // A different experiment in the same directory is refused.
    let other = rein(&[
        "eval",
        "--suite",
        "traps",
        "--model",
        "tiny",
        "--no-pull",
        "--reps",
        "1",
        "--limit",
        "1",
        "--out",
        &out_arg,
        "--evals-dir",
        &evals,
    ]);
    assert!(!other.status.success());
    assert!(
        stderr(&other).contains("different experiment"),
        "{}",
        stderr(&other)
    );

    // The report is rebuilt from the results alone.
    std::fs::remove_file(out.join("report.md")).unwrap();
    let report = rein(&[
        "eval",
        "report",
        out.join("results.jsonl").to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert_report(&out, 1);
}

#[test]
fn a_quantized_model_is_written_with_provenance_and_runs_as_an_arm() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let tiny = tiny_model();
    let cache = tempfile::tempdir().unwrap();
    let tiny_arg = tiny.to_str().unwrap();
    let quantize = |extra: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_rein"));
        command
            .args(["models", "quantize", tiny_arg, "--to", "q8_0"])
            .args(extra)
            .env("REIN_MODELS_DIR", cache.path())
            .env_remove("RUST_LOG");
        command.output().unwrap()
    };
    // The tiny model is already quantized (Q4_1): refused without the flag.
    let refused = quantize(&[]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--allow-requantize"),
        "{}",
        stderr(&refused)
    );
    let made = quantize(&["--allow-requantize"]);
    assert!(made.status.success(), "{}", stderr(&made));
    let path = std::path::PathBuf::from(stdout(&made).trim());
    assert!(path.is_file(), "{}", path.display());
    assert!(!path.with_extension("gguf.partial").exists());
    let provenance: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.json", path.display())).unwrap())
            .unwrap();
    assert_eq!(provenance["requantized"], true);
    assert_eq!(provenance["source_type"], "Q4_1");
    assert_eq!(provenance["file_type"], "Q8_0");
    assert_eq!(provenance["sha256"].as_str().unwrap().len(), 64);

    // Both files run as arms of a quantization experiment.
    let out = cache.path().join("quant");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(one_task_ab(tiny_arg, "quant=source,q8_0", &out))
        .env("REIN_MODELS_DIR", cache.path())
        .env("REIN_NO_PROMPT_CACHE", "1")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let records = lines(&out.join("results.jsonl"));
    assert_eq!(records.len(), 2);
    let types: Vec<&str> = records
        .iter()
        .map(|r| r["model_type"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"Q4_1") && types.contains(&"Q8_0"),
        "{types:?}"
    );
    let bits: Vec<f64> = records
        .iter()
        .map(|r| r["bits_per_weight"].as_f64().unwrap())
        .collect();
    assert!(bits[0] != bits[1], "{bits:?}");
    assert_report(&out, 2);
}

#[test]
fn kv_cache_types_run_as_arms() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kv");
    let mut args = one_task_ab("tiny", "kv=f16,q8_0,q4_0", &out);
    args.push("--no-pull".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = rein(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let records = lines(&out.join("results.jsonl"));
    let kinds: Vec<&str> = records.iter().map(|r| r["kv"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    for record in &records {
        assert!(record["error"].is_null(), "{record}");
        assert_ne!(record["stop_reason"], "backend_error", "{record}");
    }
    assert_report(&out, 3);
}

#[test]
fn generated_tasks_run_from_seeds_and_resume_to_the_same_tasks() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gen");
    let out_arg = out.display().to_string();
    let evals = evals_dir();
    let without_seeds = rein(&[
        "eval", "--suite", "gen", "--model", "tiny", "--out", &out_arg,
    ]);
    assert!(!without_seeds.status.success());
    assert!(
        stderr(&without_seeds).contains("--suite gen needs --seeds"),
        "{}",
        stderr(&without_seeds)
    );
    // Seeds 27 and 28: a declared-tool family and an MCP family (its server started).
    let args = [
        "eval",
        "--suite",
        "gen",
        "--seeds",
        "27..29",
        "--model",
        "tiny",
        "--reps",
        "1",
        "--out",
        &out_arg,
        "--evals-dir",
        &evals,
    ];
    let first = rein(&args);
    assert!(first.status.success(), "{}", stderr(&first));
    let records = lines(&out.join("results.jsonl"));
    let tasks: Vec<&str> = records
        .iter()
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 2, "{records:?}");
    assert!(tasks.contains(&"00027-answer-after-result"), "{tasks:?}");
    assert!(
        tasks.contains(&"00028-mcp-lookup-among-decoys"),
        "{tasks:?}"
    );
    assert!(
        records
            .iter()
            .all(|r| r["suite"] == "gen" && r["error"].is_null()),
        "{records:?}"
    );
    let task_dir = out.join("tasks/gen/00028-mcp-lookup-among-decoys");
    assert!(task_dir.join("task.toml").is_file());
    assert!(task_dir.join("api.json").is_file());
    // The MCP family's trace shows its server started with the generated tools.
    let trace = std::fs::read_to_string(
        out.join(
            records
                .iter()
                .find(|r| r["task"] == "00028-mcp-lookup-among-decoys")
                .unwrap()["trace"]
                .as_str()
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(
        trace.contains("\"started\":true"),
        "{}",
        &trace[..trace.len().min(600)]
    );
    // Again: the same tasks are written, every run is found done, nothing runs twice.
    let again = rein(&args);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 2);
    assert!(out.join("report.md").is_file());
}
