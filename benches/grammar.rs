//! Cost of tool-call grammars: building the grammar for a 20-tool set (criterion),
//! and decode time per token with and without the call grammar on the same prompt
//! (median over repetitions, printed; `REIN_BENCH_MODEL`, default `small`).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use rein_format::{hermes, ToolChoice, ToolSet, TurnSpec};
use rein_llama::{
    Engine, EngineConfig, GenerateOutput, GenerateRequest, Grammar, LocalModel, Prompt,
    SamplingParams,
};
use rein_models::{Manifest, ModelCache};
use rein_protocol::{Message, ToolSpec};
use serde_json::json;

/// Twenty tools with five parameters each, of every kind the sanitizer emits.
fn twenty_tools() -> Vec<ToolSpec> {
    (0..20)
        .map(|i| {
            serde_json::from_value(json!({"type": "function", "function": {
                "name": format!("tool_{i}"),
                "description": format!("Tool number {i}"),
                "parameters": {"type": "object", "properties": {
                    "path": {"type": "string", "description": "A file path"},
                    "count": {"type": "integer", "minimum": 1, "maximum": 500},
                    "mode": {"enum": ["fast", "slow", "auto"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                    "options": {"type": "object", "properties": {"dry run": {"type": "boolean"}, "limit": {"type": ["integer", "null"]}}}
                }, "required": ["path", "count"]}
            }}))
            .expect("tool spec")
        })
        .collect()
}

fn grammar_build(c: &mut Criterion) {
    let specs = twenty_tools();
    c.bench_function("grammar/build_20_tools", |b| {
        b.iter(|| {
            let set = ToolSet::prepare(&specs).expect("tools");
            hermes::call_grammar(&set, &ToolChoice::Required, true).expect("grammar")
        })
    });
    report_constrained_decode();
}

/// One greedy generation of 48 tokens in a new session (end of generation ignored
/// when unconstrained, so every run is as long).
fn generate_once(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    prompt: &str,
    grammar: Option<Grammar>,
) -> GenerateOutput {
    let mut request = GenerateRequest::new(Prompt::Text(prompt.to_string()));
    request.sampling = SamplingParams::greedy();
    request.max_tokens = 48;
    request.ignore_eog = grammar.is_none();
    request.grammar = grammar;
    runtime.block_on(async {
        engine
            .session()
            .await
            .expect("session")
            .generate(request)
            .await
            .expect("generate")
    })
}

/// Median decode milliseconds per token for `grammar` on `prompt`.
fn ms_per_token(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    prompt: &str,
    grammar: Option<Grammar>,
) -> (f64, usize) {
    let mut samples = Vec::new();
    let mut tokens = 0;
    for _ in 0..7 {
        let out = generate_once(runtime, engine, prompt, grammar.clone());
        // The first token's time is part of the prefill measurement.
        if out.tokens.len() > 1 {
            samples.push(out.decode_time.as_secs_f64() * 1000.0 / out.tokens.len() as f64);
            tokens = out.tokens.len();
        }
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    (
        samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN),
        tokens,
    )
}

fn report_constrained_decode() {
    let name = std::env::var("REIN_BENCH_MODEL").unwrap_or_else(|_| "small".into());
    let manifest = Manifest::embedded().expect("manifest");
    let cache = ModelCache::from_env().expect("cache");
    let Some(path) = manifest
        .get(&name)
        .ok()
        .and_then(|e| cache.complete_path(e))
    else {
        eprintln!(
            "skipping constrained decode: {name} is not in the cache (rein models pull {name})"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut config = EngineConfig::new(path);
    config.n_ctx = Some(4096);
    config.threads = Some(2);
    let engine = runtime.block_on(Engine::load(config)).expect("load");
    let model = LocalModel::new(engine.clone()).expect("format");
    let set = ToolSet::prepare(&twenty_tools()).expect("tools");
    let messages = [Message::user(
        "Use tool_3 on src/main.rs with count 12, mode fast and tags a, b.",
    )];
    let prepared = model
        .format()
        .prepare(&TurnSpec {
            tools: Some(&set),
            choice: &ToolChoice::Required,
            constrained: true,
            parallel: false,
            ..TurnSpec::plain(&messages)
        })
        .expect("render");
    let prompt = prepared.prompt;
    let grammar = prepared.grammar.expect("grammar");
    let (free, free_tokens) = ms_per_token(&runtime, &engine, &prompt, None);
    let (constrained, constrained_tokens) =
        ms_per_token(&runtime, &engine, &prompt, Some(grammar.clone()));
    eprintln!(
        "{name}: unconstrained {free:.2} ms/token ({free_tokens} tokens), constrained {constrained:.2} ms/token ({constrained_tokens} tokens), overhead {:+.1}%",
        (constrained / free - 1.0) * 100.0
    );
    report_llguidance(&runtime, engine, &prompt, &grammar, free);
}

/// The same constrained decode with llguidance as the grammar engine (the
/// `llguidance` feature, on by default), forced tokens appended, and the one-time cost
/// of its parser factory.
#[cfg(feature = "llguidance")]
fn report_llguidance(
    runtime: &tokio::runtime::Runtime,
    engine: Engine,
    prompt: &str,
    grammar: &Grammar,
    free: f64,
) {
    let path = engine.info().path.clone();
    drop(engine);
    let mut config = EngineConfig::new(path);
    config.n_ctx = Some(4096);
    config.threads = Some(2);
    config.grammar_engine = rein_llama::GrammarEngine::Llguidance;
    let engine = runtime.block_on(Engine::load(config)).expect("load");
    let started = std::time::Instant::now();
    generate_once(runtime, &engine, prompt, Some(grammar.clone()));
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (constrained, tokens) = ms_per_token(runtime, &engine, prompt, Some(grammar.clone()));
    eprintln!(
        "llguidance: constrained {constrained:.2} ms/token ({tokens} tokens), overhead {:+.1}%; first request (with the parser factory) {first_ms:.0} ms",
        (constrained / free - 1.0) * 100.0
    );
}

#[cfg(not(feature = "llguidance"))]
fn report_llguidance(_: &tokio::runtime::Runtime, _: Engine, _: &str, _: &Grammar, _: f64) {
    eprintln!("llguidance: not built (the `llguidance` feature is off)");
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = grammar_build
}
criterion_main!(benches);
