#!/usr/bin/env bash
# The quantization study of docs/QUANTIZATION.md on the default model (issue 45,
# decision 0064). Every step is resumable or quick: run the script again to add the
# runs an interrupted session did not reach; the report is regenerated from the files
# in docs/quantization/ alone. Needs about 3 hours of a 2-core CPU in all.
set -euo pipefail
cd "$(dirname "$0")/.."
REIN=${REIN:-target/release/rein}
RUNS=${RUNS:-target/quant-study}
DATA=docs/quantization
LADDER=q8_0,q6_k,q5_k_m,q3_k_m,q2_k
MODELS=default,default@q8_0,default@q6_k,default@q5_k_m,default@q3_k_m,default@q2_k
mkdir -p "$DATA"

# The ladder, each requantized from the Q4_K_M source (no float weights ship).
$REIN models quantize default --to "$LADDER" --allow-requantize
# Solved rate per arm on 30 unseen generated tasks, the prompts recorded; the source
# arm runs first, and its traces are what the divergence is measured on.
if [ "${SKIP_EVAL:-0}" != 1 ]; then
  $REIN eval --suite gen --seeds 10590..10620 --model default \
    --ab quant=source,$LADDER --set record_prompts=on --reps 1 --parallel 2 --no-pull \
    --out "$RUNS"
fi
# Where each arm's decisions part from the source's, on the source's recorded turns.
if [ ! -f "$DATA/divergence.json" ]; then
  # shellcheck disable=SC2046 # one argument per compared model
  $REIN quant-diff default $(tr , ' ' <<<"${MODELS#default,}") --traces "$RUNS/traces/quant=source" \
    --no-pull --json "$DATA/divergence.json"
fi
if [ ! -f "$DATA/kv-divergence.json" ]; then
  $REIN quant-diff default default --kv q8_0,q4_0 --traces "$RUNS/traces/quant=source" \
    --max-turns 45 --no-pull --json "$DATA/kv-divergence.json"
fi
# Prompt and generation speed on this machine.
if [ ! -f "$DATA/speed.json" ]; then
  $REIN bench speed --models "$MODELS" --reps 3 --no-pull --json "$DATA/speed.json"
fi
cp "$RUNS/results.jsonl" "$DATA/results.jsonl"
$REIN eval report "$DATA/results.jsonl" --quantization docs/QUANTIZATION.md \
  --divergence "$DATA/divergence.json" --divergence "$DATA/kv-divergence.json" \
  --speed "$DATA/speed.json" --commands scripts/quant-study.sh
