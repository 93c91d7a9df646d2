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
cargo fmt --all --check
cargo clippy --release --locked --workspace --all-targets -- -D warnings
cargo test --release --locked --workspace
