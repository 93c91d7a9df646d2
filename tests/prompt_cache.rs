//! The prompt cache on disk with the real tiny model: a prefix saved by one engine and
//! loaded by a fresh one gives the same greedy tokens as computing it; a truncated,
//! corrupt or foreign file is ignored, recomputed and replaced; a prompt that only
//! starts like a saved prefix loads the part they share; a second `rein run`, in the
//! same workspace or another, starts from the prefix the first saved, and `rein cache`
//! lists and clears it.

use std::path::Path;

use rein_format::TurnSpec;
use rein_llama::{
    list_prompt_cache, Engine, EngineConfig, GenerateOutput, GenerateRequest, LocalModel, Prompt,
    PromptCacheConfig, SamplingParams,
};
use rein_protocol::Message;

use crate::support::tiny_model;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh engine (as a new process would load it) using the cache in `dir`.
async fn engine_with_cache(dir: &Path) -> Engine {
    let mut config = EngineConfig::new(tiny_model());
    config.n_ctx = Some(1024);
    config.threads = Some(2);
    config.prompt_cache = Some(PromptCacheConfig::new(dir));
    Engine::load(config).await.unwrap()
}

const SYSTEM: &str = "You are a careful assistant for a small bookshop. You answer questions about opening hours, orders and returns. The shop opens at nine and closes at six on weekdays, and opens at ten and closes at four on Saturdays. It is closed on Sundays. Orders ship within two working days. Returns are accepted within thirty days with a receipt.";

/// The chat prompt of `system` then `user`, and the bytes the system part takes.
fn prompt(engine: &Engine, system: &str, user: &str) -> (String, usize) {
    let model = LocalModel::new(engine.clone()).unwrap();
    let render = |messages: &[Message]| {
        model
            .format()
            .prepare(&TurnSpec::plain(messages))
            .unwrap()
            .prompt
    };
    let full = render(&[Message::system(system), Message::user(user)]);
    let opening = render(&[Message::system(system)]);
    let stable = full
        .bytes()
        .zip(opening.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    (full, stable)
}

async fn generate(engine: &Engine, text: &str, stable: usize) -> GenerateOutput {
    let mut request = GenerateRequest::new(Prompt::Text(text.to_string()));
    request.sampling = SamplingParams::greedy();
    request.max_tokens = 24;
    request.persist_prefix = Some(stable);
    let mut session = engine.session().await.unwrap();
    session.generate(request).await.unwrap()
}

#[test]
fn a_saved_prefix_gives_the_same_tokens_as_computing_it() {
    // Loads a model: one model test at a time.
    let _model = rein_test_support::model_lock();
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let cold_engine = engine_with_cache(dir.path()).await;
        let (text, stable) = prompt(&cold_engine, SYSTEM, "When do you open on Saturday?");
        let cold = generate(&cold_engine, &text, stable).await;
        drop(cold_engine);
        assert_eq!(cold.reused_tokens, 0, "an empty cache gives nothing");
        assert_eq!(cold.loaded_tokens, 0);
        let saved = list_prompt_cache(dir.path()).unwrap();
        assert_eq!(saved.len(), 1, "the stable prefix is saved once");

        let warm_engine = engine_with_cache(dir.path()).await;
        let warm = generate(&warm_engine, &text, stable).await;
        assert!(
            warm.loaded_tokens >= 64,
            "loaded {} tokens",
            warm.loaded_tokens
        );
        assert_eq!(warm.reused_tokens, warm.loaded_tokens);
        assert!(warm.loaded_tokens < warm.prompt_tokens);
        assert_eq!(warm.tokens, cold.tokens, "same greedy tokens");
        assert_eq!(warm.text, cold.text);

        // Another question after the same instructions loads the same prefix.
        let (other, other_stable) = prompt(&warm_engine, SYSTEM, "Can I return a book?");
        drop(warm_engine);
        let again_engine = engine_with_cache(dir.path()).await;
        let again = generate(&again_engine, &other, other_stable).await;
        assert_eq!(again.loaded_tokens, warm.loaded_tokens);
        assert_eq!(list_prompt_cache(dir.path()).unwrap().len(), 1);
    });
}

#[test]
fn a_prompt_that_starts_like_a_saved_prefix_loads_the_shared_start() {
    let _model = rein_test_support::model_lock();
    let dir = tempfile::tempdir().unwrap();
    // The same instructions with one more sentence at their end: no file holds this
    // prompt's stable prefix, but the saved one shares all of it up to that sentence.
    let longer = format!("{SYSTEM} Gift cards never expire and can be used online.");
    let question = "Do gift cards expire?";
    runtime().block_on(async {
        let first_engine = engine_with_cache(dir.path()).await;
        let (text, stable) = prompt(&first_engine, SYSTEM, question);
        generate(&first_engine, &text, stable).await;
        drop(first_engine);

        // The reference computes the whole prefix with an empty cache of its own: it
        // splits the prefill where the loaded run saves (at the stable prefix). An
        // engine without a cache, which evaluates the prompt in one piece, can round
        // differently (on an AVX-512 Xeon its greedy tokens parted after four).
        let empty_dir = tempfile::tempdir().unwrap();
        let computing_engine = engine_with_cache(empty_dir.path()).await;
        let (longer_text, longer_stable) = prompt(&computing_engine, &longer, question);
        let computed = generate(&computing_engine, &longer_text, longer_stable).await;
        drop(computing_engine);
        assert_eq!(computed.loaded_tokens, 0);

        let engine = engine_with_cache(dir.path()).await;
        let started = generate(&engine, &longer_text, longer_stable).await;
        drop(engine);
        assert!(
            started.loaded_tokens >= 64,
            "loaded {} tokens",
            started.loaded_tokens
        );
        assert_eq!(started.reused_tokens, started.loaded_tokens);
        assert_eq!(started.tokens, computed.tokens, "same greedy tokens");
        assert_eq!(started.text, computed.text);
        // The new prefix is saved beside the old one, and the next engine loads it whole.
        assert_eq!(list_prompt_cache(dir.path()).unwrap().len(), 2);
        let again_engine = engine_with_cache(dir.path()).await;
        let again = generate(&again_engine, &longer_text, longer_stable).await;
        assert!(again.loaded_tokens > started.loaded_tokens);
        assert_eq!(again.tokens, computed.tokens);
    });
}

#[test]
fn a_truncated_corrupt_or_foreign_cache_file_is_ignored_and_recomputed() {
    let _model = rein_test_support::model_lock();
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let engine = engine_with_cache(dir.path()).await;
        let (text, stable) = prompt(&engine, SYSTEM, "Do you ship abroad?");
        let first = generate(&engine, &text, stable).await;
        drop(engine);
        let entry = list_prompt_cache(dir.path()).unwrap().remove(0);
        let good = std::fs::read(&entry.path).unwrap();

        // A foreign file under the right name: a valid state of other tokens.
        let foreign_dir = tempfile::tempdir().unwrap();
        let foreign_engine = engine_with_cache(foreign_dir.path()).await;
        let other_system = SYSTEM.replace("bookshop", "bicycle repair shop");
        let (foreign_text, foreign_stable) = prompt(&foreign_engine, &other_system, "Hello?");
        generate(&foreign_engine, &foreign_text, foreign_stable).await;
        drop(foreign_engine);
        let foreign = list_prompt_cache(foreign_dir.path()).unwrap().remove(0);
        let foreign_bytes = std::fs::read(&foreign.path).unwrap();

        let damaged: [(&str, Vec<u8>); 3] = [
            ("truncated", good[..good.len() / 2].to_vec()),
            ("corrupt", vec![0x5a; good.len()]),
            ("foreign", foreign_bytes),
        ];
        for (what, bytes) in damaged {
            std::fs::write(&entry.path, &bytes).unwrap();
            let engine = engine_with_cache(dir.path()).await;
            let out = generate(&engine, &text, stable).await;
            drop(engine);
            assert_eq!(out.loaded_tokens, 0, "{what}: nothing loaded");
            assert_eq!(out.reused_tokens, 0, "{what}");
            assert_eq!(
                out.tokens, first.tokens,
                "{what}: computed again, same tokens"
            );
            assert_eq!(
                std::fs::read(&entry.path).unwrap(),
                good,
                "{what}: the file is replaced by the recomputed prefix"
            );
        }
    });
}

/// The first turn's reused tokens in a `rein run` trace.
fn first_turn_reused(trace: &Path) -> u64 {
    let text = std::fs::read_to_string(trace).unwrap();
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|event| event.get("reused_tokens").and_then(|v| v.as_u64()))
        .unwrap_or_else(|| panic!("no turn in {text}"))
}

#[test]
fn a_second_rein_run_starts_from_the_prefix_the_first_saved() {
    let _model = rein_test_support::model_lock();
    tiny_model();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "remember the milk\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let traces = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(elsewhere.path().join("notes.txt"), "buy bread\n").unwrap();
    let run_in = |dir: &Path, name: &str, extra: &[&str]| {
        let trace = traces.path().join(format!("{name}.jsonl"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
            .args(["run", "--model", "tiny", "--no-pull", "--max-turns", "1"])
            .args(["--reply-tokens", "16", "--ctx", "2048", "--json"])
            .args(["--workdir", dir.to_str().unwrap()])
            .args(["--trace", trace.to_str().unwrap()])
            .args(extra)
            .arg("Read notes.txt and say what it contains.")
            .env("REIN_PROMPT_CACHE_DIR", cache.path())
            .env_remove("REIN_NO_PROMPT_CACHE")
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        first_turn_reused(&trace)
    };
    let run = |name: &str, extra: &[&str]| run_in(work.path(), name, extra);
    assert_eq!(run("cold", &[]), 0, "a fresh process with an empty cache");
    assert_eq!(list_prompt_cache(cache.path()).unwrap().len(), 1);
    assert!(run("warm", &[]) >= 64, "the saved system prompt and tools");
    assert!(
        run_in(elsewhere.path(), "elsewhere", &[]) >= 64,
        "another workspace starts from the same system prompt and tools"
    );
    assert_eq!(list_prompt_cache(cache.path()).unwrap().len(), 1);
    assert_eq!(run("off", &["--no-prompt-cache"]), 0);

    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["cache", "list"])
        .env("REIN_PROMPT_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("1 cached prefix(es)"), "{text}");
    let cleared = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["cache", "clear"])
        .env("REIN_PROMPT_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert!(cleared.status.success());
    assert!(list_prompt_cache(cache.path()).unwrap().is_empty());
}
