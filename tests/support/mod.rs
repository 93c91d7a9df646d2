//! Shared helpers: where the tiny model is, and how to run the `rein` binary.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rein_llama::{Engine, EngineConfig};
use rein_models::{Manifest, ModelCache};

pub mod scripted_server;

/// The tiny model's file in the cache; fails with instructions when it is missing.
pub fn tiny_model() -> PathBuf {
    model_path("tiny")
}

/// The named model's file in the cache; fails with instructions when it is missing.
pub fn model_path(name: &str) -> PathBuf {
    let manifest = Manifest::embedded().expect("embedded manifest");
    let cache = ModelCache::from_env().expect("model cache");
    let entry = manifest.get(name).expect("model in manifest");
    cache.complete_path(entry).unwrap_or_else(|| {
        panic!(
            "the {name} model is not in {}; run `cargo run --release -- models pull {name}` or scripts/test.sh",
            cache.dir().display()
        )
    })
}

/// A single-threaded runtime and the tiny model loaded with `n_ctx` context tokens on
/// 2 threads.
pub fn tiny_engine(n_ctx: u32) -> (tokio::runtime::Runtime, Engine) {
    model_engine("tiny", n_ctx)
}

/// A single-threaded runtime and the named model loaded with `n_ctx` context tokens on
/// 2 threads.
pub fn model_engine(name: &str, n_ctx: u32) -> (tokio::runtime::Runtime, Engine) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut config = EngineConfig::new(model_path(name));
    config.n_ctx = Some(n_ctx);
    config.threads = Some(2);
    let engine = runtime
        .block_on(Engine::load(config))
        .unwrap_or_else(|e| panic!("load the {name} model: {e}"));
    (runtime, engine)
}

/// A proptest runner with a fixed seed, so CI sees the same cases every run: `cases`
/// from the environment variable `variable` when set, else `default`.
pub fn fixed_runner(variable: &str, default: u32, max_shrink_iters: u32) -> (TestRunner, u32) {
    let cases = std::env::var(variable)
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters,
        ..Config::default()
    };
    let runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    (runner, cases)
}

/// A configuration directory that does not exist: tests see no user `rein.toml`.
pub const NO_USER_CONFIG: &str = "/nonexistent/rein-test-config";

/// The `rein` binary as a command with quiet logs, for tests that set its environment.
pub fn rein_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rein"));
    command.env_remove("RUST_LOG");
    command
}

/// Runs the `rein` binary with `args`, quiet logs.
pub fn rein(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args)
        .env_remove("RUST_LOG")
        // Each run starts cold, as before the prompt cache (tests/prompt_cache.rs
        // tests the cache itself).
        .env("REIN_NO_PROMPT_CACHE", "1")
        // No MCP servers from the user's own rein.toml.
        .env("REIN_CONFIG_DIR", NO_USER_CONFIG)
        .output()
        .expect("run rein")
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `rein serve` on a free port; killed when dropped.
pub struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `rein serve` with `args` and returns it with its base URL.
pub fn serve(args: &[&str]) -> (Served, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["serve", "--model", "tiny", "--no-pull", "--port", "0"])
        .args(args)
        .env_remove("RUST_LOG")
        .env("REIN_NO_PROMPT_CACHE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start rein serve");
    let stdout = child.stdout.take().expect("stdout");
    let served = Served(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the address");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (served, url)
}
