//! `rein run` and `rein replay` end to end on the real tiny model, real files.

use serde_json::Value;

use crate::support::{rein, stderr, stdout, tiny_model};

fn last_json(text: &str) -> Value {
    let line = text.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn run_tiny(profile: &str, dir: &std::path::Path, trace: &std::path::Path) -> Value {
    let out = rein(&[
        "run",
        "--model",
        "tiny",
        "--no-pull",
        "--workdir",
        dir.to_str().unwrap(),
        "--profile",
        profile,
        "--max-turns",
        "4",
        "--reply-tokens",
        "160",
        "--ctx",
        "4096",
        "--trace",
        trace.to_str().unwrap(),
        "--json",
        "List the files in the workspace, then read notes.txt and say what it contains.",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    last_json(&stdout(&out))
}

#[test]
fn run_reports_the_interface_fields_and_the_grammar_prevents_malformed_calls() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let traces = tempfile::tempdir().unwrap();
    for profile in ["full", "structured"] {
        let trace = traces.path().join(format!("{profile}.jsonl"));
        let result = run_tiny(profile, dir.path(), &trace);
        for field in [
            "answer",
            "stop_reason",
            "turns",
            "tool_calls",
            "tool_errors",
            "prompt_tokens",
            "completion_tokens",
            "evaluated_tokens",
            "reused_tokens",
            "wall_ms",
            "trace",
        ] {
            assert!(
                result.get(field).is_some(),
                "{profile}: no `{field}` in {result}"
            );
        }
        let turns = result["turns"].as_u64().unwrap();
        assert!((1..=4).contains(&turns), "{result}");
        assert_eq!(result["profile"], profile);
        let stop = result["stop_reason"].as_str().unwrap();
        assert!(
            [
                "answered",
                "finished",
                "max_turns",
                "max_tokens",
                "recovery_exhausted"
            ]
            .contains(&stop),
            "{result}"
        );
        // Under the grammar a call is never malformed, never names a missing tool and
        // always validates: only a cut-off reply can be dropped.
        let recoveries = result["recoveries"].as_object().unwrap();
        for class in ["format", "unknown_tool", "schema"] {
            assert!(!recoveries.contains_key(class), "{profile}: {result}");
        }
        assert_eq!(
            result["prompt_tokens"].as_u64().unwrap(),
            result["evaluated_tokens"].as_u64().unwrap()
                + result["reused_tokens"].as_u64().unwrap()
        );
        if turns > 1 {
            assert!(
                result["reused_tokens"].as_u64().unwrap() > 0,
                "the KV prefix is kept across turns: {result}"
            );
        }
        assert_eq!(result["trace"].as_str().unwrap(), trace.to_str().unwrap());
        let replay = rein(&["replay", trace.to_str().unwrap()]);
        assert!(replay.status.success(), "{}", stderr(&replay));
        let text = stdout(&replay);
        assert!(text.starts_with("== run: List the files"), "{text}");
        assert!(text.contains("-- turn 1"), "{text}");
        assert!(text.contains("== end: "), "{text}");
    }
    // The workspace is left as the tools left it: nothing outside it, no stray files
    // except the shell's saved outputs.
    assert!(dir.path().join("notes.txt").exists());
}

#[test]
fn run_refuses_bad_settings_with_one_line_errors() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    for (args, expected) in [
        (
            vec!["run", "--profile", "clever", "x"],
            "invalid value 'clever' for '--profile <PROFILE>'",
        ),
        (
            vec!["run", "--describe", "short", "x"],
            "invalid value 'short' for '--describe <DESCRIBE>'",
        ),
        (
            vec![
                "run",
                "--workdir",
                missing.to_str().unwrap(),
                "--no-pull",
                "x",
            ],
            "--workdir",
        ),
        (vec!["replay", missing.to_str().unwrap()], "trace"),
    ] {
        let out = rein(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn bench_reuse_and_concurrency_report_their_figures() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let out = rein(&[
        "bench",
        "reuse",
        "--model",
        "tiny",
        "--no-pull",
        "--ctx",
        "256",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reuse = last_json(&stdout(&out));
    let prompt = reuse["prompt_tokens"].as_u64().unwrap();
    let reused = reuse["reused_tokens"].as_u64().unwrap();
    assert!(prompt > 256 && reused >= 256 && reused < prompt, "{reuse}");
    for field in ["ttft_reuse_ms", "ttft_full_ms", "ratio"] {
        assert!(reuse[field].as_f64().unwrap() > 0.0, "{reuse}");
    }
    // Each arm says what it evaluated; the cold one took nothing from a cache.
    assert_eq!(reuse["full"]["cached_tokens"], 0, "{reuse}");
    assert_eq!(
        reuse["full"]["evaluated_tokens"].as_u64(),
        Some(prompt),
        "{reuse}"
    );
    assert_eq!(
        reuse["reuse"]["evaluated_tokens"].as_u64(),
        Some(prompt - reused),
        "{reuse}"
    );
    assert!(reuse["refused"].is_null(), "{reuse}");
    let out = rein(&[
        "bench",
        "concurrency",
        "--model",
        "tiny",
        "--no-pull",
        "--sessions",
        "1,3",
        "--tokens",
        "8",
        "--join-tokens",
        "300",
        "--reps",
        "1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rates = last_json(&stdout(&out));
    // A 300-token prompt joining three running sessions, with mixed batches and without.
    assert_eq!(rates["join"]["prompt_tokens"], 300, "{rates}");
    for field in ["ttft_mixed_ms", "ttft_separate_ms", "ratio"] {
        assert!(rates["join"][field].as_f64().unwrap() > 0.0, "{rates}");
    }
    assert!(
        rates["aggregate_tokens_per_s"]["1"].as_f64().unwrap() > 0.0,
        "{rates}"
    );
    assert!(
        rates["aggregate_tokens_per_s"]["3"].as_f64().unwrap() > 0.0,
        "{rates}"
    );
    let bad = rein(&[
        "bench",
        "concurrency",
        "--model",
        "tiny",
        "--no-pull",
        "--sessions",
        "0",
    ]);
    assert!(
        stderr(&bad).contains("--sessions needs positive counts"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn run_drives_a_remote_openai_backend_served_by_rein_serve() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    tiny_model();
    let (_server, url) = crate::support::serve(&["--sessions", "1", "--ctx", "4096"]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let traces = tempfile::tempdir().unwrap();
    let trace = traces.path().join("remote.jsonl");
    let out = rein(&[
        "run",
        "--backend",
        "openai",
        "--base-url",
        &url,
        "--model",
        "tiny",
        "--workdir",
        dir.path().to_str().unwrap(),
        "--profile",
        "structured",
        "--max-turns",
        "3",
        "--reply-tokens",
        "160",
        "--ctx",
        "4096",
        "--trace",
        trace.to_str().unwrap(),
        "--json",
        "Read notes.txt and say what it contains.",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = last_json(&stdout(&out));
    assert!(result["model"].as_str().unwrap().contains(&url), "{result}");
    let turns = result["turns"].as_u64().unwrap();
    assert!((1..=3).contains(&turns), "{result}");
    assert!(result["tool_calls"].as_u64().unwrap() >= 1, "{result}");
    assert!(result["prompt_tokens"].as_u64().unwrap() > 0, "{result}");
    // The server's grammar made every call well-formed, named and valid.
    let recoveries = result["recoveries"].as_object().unwrap();
    for class in ["format", "unknown_tool", "schema"] {
        assert!(!recoveries.contains_key(class), "{result}");
    }
    let replay = rein(&["replay", trace.to_str().unwrap()]);
    assert!(replay.status.success(), "{}", stderr(&replay));
}
