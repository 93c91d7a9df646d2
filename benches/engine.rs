//! Prefill and decode speed of rein's engine, shaped like llama.cpp's `llama-bench
//! -p 512 -n 64`: pp512 evaluates a 512-token prompt in a fresh session, tg64
//! generates 64 tokens one at a time (sampling included). Runs on every model of
//! `REIN_BENCH_MODELS` (default `tiny,small`) that is in the cache, with
//! `REIN_BENCH_THREADS` threads (default 2).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rein_llama::{Engine, EngineConfig, GenerateRequest, Prompt, SamplingParams, TokenId};
use rein_models::{Manifest, ModelCache};

const PROMPT_TOKENS: usize = 512;
const GENERATED_TOKENS: u32 = 64;

fn engine_speed(c: &mut Criterion) {
    let manifest = Manifest::embedded().expect("manifest");
    let cache = ModelCache::from_env().expect("cache");
    let threads: u32 = std::env::var("REIN_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let names = std::env::var("REIN_BENCH_MODELS").unwrap_or_else(|_| "tiny,small".into());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some(path) = manifest.get(name).ok().and_then(|e| cache.complete_path(e)) else {
            eprintln!("skipping {name}: not in the cache (rein models pull {name})");
            continue;
        };
        let mut config = EngineConfig::new(path);
        config.n_ctx = Some(1024);
        config.n_batch = 512;
        config.threads = Some(threads);
        let engine = runtime.block_on(Engine::load(config)).expect("load");
        let prompt = runtime.block_on(prompt_tokens(&engine));

        let mut group = c.benchmark_group(format!("{name}/t{threads}"));
        group.sample_size(10).warm_up_time(Duration::from_secs(1));

        group.throughput(Throughput::Elements(PROMPT_TOKENS as u64));
        group.bench_function("pp512", |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let mut session = engine.session().await.expect("session");
                    let mut request = GenerateRequest::new(Prompt::Tokens(prompt.clone()));
                    request.sampling = SamplingParams::greedy();
                    request.max_tokens = 1;
                    request.ignore_eog = true;
                    session.generate(request).await.expect("prefill")
                })
            })
        });

        group.throughput(Throughput::Elements(u64::from(GENERATED_TOKENS)));
        group.bench_function("tg64", |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let mut session = engine.session().await.expect("session");
                    let mut request = GenerateRequest::new(Prompt::Tokens(prompt[..1].to_vec()));
                    request.sampling = SamplingParams::greedy();
                    request.max_tokens = GENERATED_TOKENS;
                    request.ignore_eog = true;
                    let out = session.generate(request).await.expect("decode");
                    assert_eq!(out.tokens.len(), GENERATED_TOKENS as usize);
                    out
                })
            })
        });
        group.finish();
    }
}

/// 512 tokens of ordinary text.
async fn prompt_tokens(engine: &Engine) -> Vec<TokenId> {
    let text =
        "The quick brown fox jumps over the lazy dog while the river runs to the sea. ".repeat(64);
    let tokens = engine.tokenize(&text, true).await.expect("tokenize");
    assert!(tokens.len() >= PROMPT_TOKENS, "{} tokens", tokens.len());
    tokens[..PROMPT_TOKENS].to_vec()
}

criterion_group!(benches, engine_speed);
criterion_main!(benches);
