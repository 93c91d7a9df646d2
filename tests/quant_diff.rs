//! `rein quant-diff` end to end on the tiny model: an eval run records its prompts,
//! each recorded prompt reads back as the tokens the turn reported, and replaying the
//! turns shows no divergence of the model from itself and a positive one for a
//! requantized copy.

use std::path::Path;

use rein_llama::{ForcingModel, KvCacheType};
use rein_protocol::{read_trace, RunEvent};
use serde_json::Value;

use crate::support::{rein_command, stderr, stdout, tiny_model, NO_USER_CONFIG};

/// Runs `rein` with `args`, the model cache at `models`.
fn rein_in(models: &Path, args: &[&str]) -> std::process::Output {
    rein_command()
        .args(args)
        .env("REIN_MODELS_DIR", models)
        .env("REIN_NO_PROMPT_CACHE", "1")
        .env("REIN_CONFIG_DIR", NO_USER_CONFIG)
        .output()
        .expect("run rein")
}

#[test]
fn recorded_turns_replay_without_divergence_on_the_model_itself_and_with_some_on_a_requantized_copy(
) {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let tiny = tiny_model();
    let tiny_arg = tiny.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    let made = rein_in(
        &models,
        &[
            "models",
            "quantize",
            tiny_arg,
            "--to",
            "q2_k",
            "--allow-requantize",
        ],
    );
    assert!(made.status.success(), "{}", stderr(&made));

    // Two generated tasks, their prompts recorded.
    let out = dir.path().join("eval");
    let eval = rein_in(
        &models,
        &[
            "eval",
            "--suite",
            "gen",
            "--seeds",
            "0..2",
            "--model",
            tiny_arg,
            "--reps",
            "1",
            "--set",
            "record_prompts=on",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(eval.status.success(), "{}", stderr(&eval));

    // Every turn recorded its prompt, and the prompt reads back as the turn's tokens.
    let model = ForcingModel::load(&tiny).unwrap();
    let reader = model.reader(4096, Some(2), KvCacheType::F16).unwrap();
    let traces = rein_eval::quant_diff::trace_files(&out).unwrap();
    assert_eq!(traces.len(), 2, "{traces:?}");
    let mut turns = 0;
    for trace in &traces {
        for event in read_trace(trace).unwrap() {
            if let RunEvent::Turn {
                prompt_tokens,
                prompt,
                raw,
                ..
            } = event
            {
                let prompt = prompt.expect("a recorded prompt");
                let literal: Vec<_> = prompt.literal.iter().map(|[s, e]| *s..*e).collect();
                assert_eq!(
                    reader.prompt_tokens(&prompt.text, &literal).len(),
                    prompt_tokens,
                    "{}",
                    trace.display()
                );
                assert!(model.reply_tokens(&raw).is_some(), "{raw:?}");
                turns += 1;
            }
        }
    }
    assert!(turns >= 2, "{turns} turns");
    drop(reader);
    drop(model);

    // The model against itself and against its 2-bit copy.
    let json = dir.path().join("diff.json");
    let copy = format!("{tiny_arg}@q2_k");
    let diff = rein_in(
        &models,
        &[
            "quant-diff",
            tiny_arg,
            tiny_arg,
            &copy,
            "--traces",
            out.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(diff.status.success(), "{}", stderr(&diff));
    assert!(
        stdout(&diff).contains("| call_or_answer |"),
        "{}",
        stdout(&diff)
    );
    let diffs: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(diffs.len(), 2);
    let (itself, requantized) = (&diffs[0], &diffs[1]);
    assert_eq!(itself["turns"], turns, "{itself}");
    for kind in itself["kinds"].as_array().unwrap() {
        assert_eq!(kind["mean_kl"], 0.0, "{kind}");
        assert_eq!(kind["top1_agreement"], 1.0, "{kind}");
    }
    let opening = &requantized["kinds"][0];
    assert_eq!(opening["kind"], "call_or_answer");
    assert!(opening["mean_kl"].as_f64().unwrap() > 0.0, "{opening}");

    // The speed of both files, and the report from the results, the comparison and
    // the speeds: the same bytes when regenerated.
    let speed = dir.path().join("speed.json");
    let bench = rein_in(
        &models,
        &[
            "bench",
            "speed",
            "--models",
            &format!("{tiny_arg},{copy}"),
            "--prompt",
            "32",
            "--generate",
            "4",
            "--reps",
            "1",
            "--json",
            speed.to_str().unwrap(),
        ],
    );
    assert!(bench.status.success(), "{}", stderr(&bench));
    let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&speed).unwrap()).unwrap();
    let types: Vec<&str> = rows
        .iter()
        .map(|r| r["file_type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["Q4_1", "Q2_K"]);
    assert!(rows
        .iter()
        .all(|r| r["generated_tokens_per_s"].as_f64().unwrap() > 0.0));
    let report_path = dir.path().join("docs/QUANTIZATION.md");
    let report = || {
        let made = rein_in(
            &models,
            &[
                "eval",
                "report",
                out.join("results.jsonl").to_str().unwrap(),
                "--quantization",
                report_path.to_str().unwrap(),
                "--divergence",
                json.to_str().unwrap(),
                "--speed",
                speed.to_str().unwrap(),
            ],
        );
        assert!(made.status.success(), "{}", stderr(&made));
        let mut files: Vec<_> = std::fs::read_dir(dir.path().join("docs/quantization"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files.push(report_path.clone());
        files
            .iter()
            .map(|f| (f.clone(), std::fs::read(f).unwrap()))
            .collect::<Vec<_>>()
    };
    let first = report();
    assert_eq!(first.len(), 4, "{first:?}");
    let text = String::from_utf8(first[3].1.clone()).unwrap();
    assert!(
        text.contains(&format!(
            "| {copy} | Q2_K | f16 | – | {turns} | call_or_answer |"
        )),
        "{text}"
    );
    assert!(first == report(), "the report changed when regenerated");

    // Traces without recorded prompts say what to do.
    let bare = dir.path().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::write(
        bare.join("rep0.jsonl"),
        r#"{"event":"turn","turn":1,"attempt":1,"prompt_tokens":3,"reused_tokens":0,"completion_tokens":1,"max_tokens":8,"ttft_ms":1,"ms":1,"cut_off":false,"raw":"hi","t_ms":0}"#,
    )
    .unwrap();
    let refused = rein_in(
        &models,
        &[
            "quant-diff",
            tiny_arg,
            tiny_arg,
            "--traces",
            bare.to_str().unwrap(),
        ],
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("record_prompts=on"),
        "{}",
        stderr(&refused)
    );
}
