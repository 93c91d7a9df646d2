#!/usr/bin/env bash
# rein's test suite: installs build dependencies, pulls the tiny test model (verified
# by sha256), then runs every test in the release profile (llama.cpp is compiled once,
# for one profile), plus fmt and clippy.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh
cargo build --release --locked --bin rein
"${CARGO_TARGET_DIR:-target}/release/rein" models pull tiny
# The small model: the server's reading of its calls is tested over HTTP.
"${CARGO_TARGET_DIR:-target}/release/rein" models pull small
# Gemma 3 270M: the Gemma family's real tokenizer (content cannot forge its markers).
"${CARGO_TARGET_DIR:-target}/release/rein" models pull gemma
scripts/fetch-fixtures.sh
scripts/setup-python.sh
cargo fmt --all --check
# Linux-only code (the shell's sandbox) stays behind cfg(target_os = "linux").
scripts/check-linux-gating.sh
cargo fmt --manifest-path fuzz/Cargo.toml --check
cargo clippy --release --locked --workspace --all-targets -- -D warnings
# Builds without llguidance (the default feature): GBNF holds every grammar.
cargo clippy --release --locked --workspace --all-targets --no-default-features -- -D warnings
# Tests run in parallel; tests that load a model use every core (llama.cpp with OpenMP
# threads), so each takes rein-test-support's model lock and they run one at a time.
cargo test --release --locked --workspace
# The fuzz targets' bodies on their seeds and saved crashes (stable toolchain; the
# fuzzing itself is scripts/fuzz.sh).
cargo test --release --locked --manifest-path fuzz/Cargo.toml
