#!/usr/bin/env bash
# GPU checks for a machine with an NVIDIA GPU and the CUDA toolkit: builds rein with
# --features cuda, prints the memory plan against the real device, runs the engine
# tests on the GPU build, and the reuse, concurrency and memory benchmarks.
# Usage: scripts/gpu-check.sh [MODEL]   (MODEL defaults to small; results in gpu-check/)
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-small}"
out=gpu-check
mkdir -p "$out"
export REIN_MODELS_DIR="${REIN_MODELS_DIR:-$PWD/models}"

nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv | tee "$out/nvidia-smi.csv"
cargo build --release --locked --features cuda 2>&1 | tail -3
rein=target/release/rein
"$rein" models pull "$model" >/dev/null

# The plan against the device: every layer should be offloaded for these models.
"$rein" models inspect "$model" --ctx 4096 --sessions 8 --gpu-layers auto | tee "$out/plan.txt"
grep -E '^gpu layers +([0-9]+) of \1$' "$out/plan.txt" >/dev/null \
  || echo "NOTE: not every layer planned on the GPU (see $out/plan.txt)"

# The engine and concurrency tests on the GPU build.
cargo test --release --locked --features cuda --test all -- --test-threads=1 engine:: concurrency:: \
  2>&1 | tail -5 | tee "$out/tests.txt"

# Benchmarks (last stdout line of each is JSON).
"$rein" bench reuse --model "$model" --ctx 2048 --json | tail -1 | tee "$out/reuse.json"
"$rein" bench concurrency --model "$model" --sessions 1,2,4,8 --tokens 64 --json | tail -1 | tee "$out/concurrency.json"
"$rein" bench memory --model "$model" --ctx 2048 --sessions 4 --json | tail -1 | tee "$out/memory.json"
# GPU memory in use while a 4-session run holds its plan (compare with plan.txt's gpu row).
( "$rein" bench memory --model "$model" --ctx 2048 --sessions 4 --json >/dev/null & pid=$!
  sleep 5; nvidia-smi --query-gpu=memory.used --format=csv,noheader | tee "$out/gpu-used-during-run.txt"
  wait "$pid" )
echo "results in $out/"
