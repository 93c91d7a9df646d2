#!/usr/bin/env bash
# A rein binary for other machines: built for an x86-64 microarchitecture level
# instead of this CPU (.cargo/config.toml's target-cpu=native), so it runs on any CPU
# of that level. llama-cpp-sys-2 passes the same level to llama.cpp (-march) and turns
# on ggml's kernels for exactly its features (docs/decisions/0062).
#
#   scripts/build-portable.sh [LEVEL]     LEVEL: x86-64-v3 (default: AVX2, FMA, F16C,
#                                         BMI2; Intel Haswell / AMD Excavator and later)
#                                         or x86-64-v2 (SSE4.2, POPCNT; older CPUs)
#
# The binary is target/portable-LEVEL/release/rein; its own target directory keeps the
# native build's untouched (llama.cpp compiles once per directory, about 8 minutes).
set -euo pipefail
level="${1:-x86-64-v3}"
case "$level" in
  x86-64|x86-64-v2|x86-64-v3|x86-64-v4) ;;
  *) echo "unknown level $level: use x86-64-v2, x86-64-v3 or x86-64-v4" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
# RUSTFLAGS replaces the config file's flags; the AMX exclusions stay with the level
# (-march of a level never enables AMX).
RUSTFLAGS="-C target-cpu=$level" CARGO_TARGET_DIR="target/portable-$level" \
  cargo build --release --locked
echo "target/portable-$level/release/rein"
