#!/usr/bin/env bash
# Fuzzes rein's schema sanitizer, tool-call parsers, argument coercer and server request
# parser with cargo-fuzz (libFuzzer; needs a nightly toolchain and `cargo install cargo-fuzz`).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 600 s, all four)
# Each target runs in turn from its seeds (fuzz/seeds/<target>) plus the corpus kept in
# fuzz/corpus/<target>; a crash stops the run and its input is left in
# fuzz/artifacts/<target>/. Copy a fixed crash into fuzz/regressions/<target>/ so the
# stable test `cargo test --manifest-path fuzz/Cargo.toml` replays it from then on.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(sanitizer parser coercer request)
export CARGO_TARGET_DIR="$root/fuzz/target"
# Safe Rust: no sanitizer instrumentation (several times the executions per second);
# debug assertions stay on, so overflow and slicing bugs still panic.
cargo +nightly fuzz build -s none
for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$target"
  log="fuzz/corpus/$target.log"
  echo "fuzzing $target for ${seconds}s (log: $log)"
  cargo +nightly fuzz run -s none "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
    -dict=fuzz/dict.txt -max_len=4096 -max_total_time="$seconds" -print_final_stats=1 \
    >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  grep -E "^Done|stat::number_of_executed_units|stat::peak_rss_mb" "$log" || true
  tail -n 30 "$log" | grep -E "cov: " | tail -1 || true
done
