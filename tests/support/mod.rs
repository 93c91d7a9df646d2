//! Shared helpers: where the tiny model is, and how to run the `rein` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

use rein_models::{Manifest, ModelCache};

/// The tiny model's file in the cache; fails with instructions when it is missing.
pub fn tiny_model() -> PathBuf {
    let manifest = Manifest::embedded().expect("embedded manifest");
    let cache = ModelCache::from_env().expect("model cache");
    let entry = manifest.get("tiny").expect("tiny in manifest");
    cache.complete_path(entry).unwrap_or_else(|| {
        panic!(
            "the tiny model is not in {}; run `cargo run --release -- models pull tiny` or scripts/test.sh",
            cache.dir().display()
        )
    })
}

/// Runs the `rein` binary with `args`, quiet logs.
pub fn rein(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args)
        .env_remove("RUST_LOG")
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
