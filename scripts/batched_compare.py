"""Interleaves `rein bench concurrency` with llama.cpp's llama-batched-bench and prints medians.

    python3 scripts/batched_compare.py --batched-bench PATH/TO/llama-batched-bench \
        [--model small] [--sessions 1,2,4] [--tokens 64] [--rounds 3] [--threads 2] \
        [--layouts one,per-session]

Each round runs rein's benchmark (sessions generating `--tokens` tokens each, greedy,
short prompts of their own) and then llama-batched-bench, once for each KV layout, on
the same GGUF with the same prompt length per sequence (not shared), the same generated
tokens, the same threads and batch size, so slow and fast moments of a noisy machine
fall on both. rein keeps every session's cells in one KV buffer (so a session can start
from another's prefix); llama-batched-bench's layouts:

- `one`: one KV buffer for all sequences, as rein (`-kvu`);
- `per-session`: a buffer per sequence (its default).

Compared:

- decode: tokens generated after each sequence's first over the generation time
  (llama-batched-bench's S_TG; rein's `decode_tokens_per_s`);
- total: prompt plus generated tokens over the whole time (S; rein's
  `total_tokens_per_s`, which also counts each session's join and its sampling).

llama-batched-bench decodes random tokens and samples nothing; rein samples every token
of every session over the whole vocabulary and streams it. llama-batched-bench is built
outside this repository from the llama.cpp sources rein vends (see docs/BENCHMARKS.md).
"""
import argparse
import json
import statistics
import subprocess

LAYOUTS = {
    # layout: llama-batched-bench's extra arguments
    "one": ["-kvu"],
    "per-session": [],
}


def model_path(rein, name):
    out = subprocess.run([rein, "models", "path", name], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def rein_round(rein, model, sessions, tokens, threads):
    out = subprocess.run(
        [rein, "bench", "concurrency", "--model", model, "--sessions", ",".join(map(str, sessions)),
         "--tokens", str(tokens), "--join-tokens", "0", "--threads", str(threads), "--json"],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def batched_round(binary, path, sessions, prompt, tokens, threads, extra):
    ctx = max(sessions) * (prompt + tokens) + 64
    out = subprocess.run(
        [binary, "-m", path, "-c", str(ctx), "-b", "512", "-ub", "512", "-t", str(threads), "-tb", str(threads),
         "-npp", str(prompt), "-ntg", str(tokens), "-npl", ",".join(map(str, sessions)), "--output-format", "jsonl",
         *extra],
        capture_output=True, text=True, check=True,
    )
    rows = {}
    for line in (out.stdout + out.stderr).splitlines():
        line = line.strip()
        if line.startswith("{") and '"speed_tg"' in line:
            row = json.loads(line)
            rows[row["pl"]] = row
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batched-bench", required=True)
    parser.add_argument("--rein", default="target/release/rein")
    parser.add_argument("--model", default="small")
    parser.add_argument("--sessions", default="1,2,4")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layouts", default="one,per-session")
    args = parser.parse_args()
    sessions = [int(s) for s in args.sessions.split(",")]
    layouts = args.layouts.split(",")
    for layout in layouts:
        if layout not in LAYOUTS:
            parser.error(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    path = model_path(args.rein, args.model)
    ours = {n: {"decode": [], "total": []} for n in sessions}
    theirs = {(l, n): {"decode": [], "total": []} for l in layouts for n in sessions}
    for round_index in range(args.rounds):
        report = rein_round(args.rein, args.model, sessions, args.tokens, args.threads)
        one = report["prompt_tokens"]["1"] if "1" in report["prompt_tokens"] else None
        prompt = round(one["evaluated_tokens"]) if one else 14
        for n in sessions:
            ours[n]["decode"].append(report["decode_tokens_per_s"][str(n)])
            ours[n]["total"].append(report["total_tokens_per_s"][str(n)])
        for layout in layouts:
            rows = batched_round(args.batched_bench, path, sessions, prompt, args.tokens, args.threads,
                                 LAYOUTS[layout])
            for n in sessions:
                theirs[(layout, n)]["decode"].append(rows[n]["speed_tg"])
                theirs[(layout, n)]["total"].append(rows[n]["speed"])
        print(f"round {round_index + 1}: prompt {prompt} tokens; "
              + "; ".join(f"{n}: rein {ours[n]['decode'][-1]:.1f} vs "
                          + ", ".join(f"{theirs[(l, n)]['decode'][-1]:.1f} ({l})" for l in layouts)
                          + " decode t/s" for n in sessions),
              flush=True)
    print("| llama-batched-bench KV layout | sequences | llama-batched-bench S_TG | rein decode | ratio "
          "| llama-batched-bench S | rein total | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for layout in layouts:
        for n in sessions:
            their_decode = statistics.median(theirs[(layout, n)]["decode"])
            our_decode = statistics.median(ours[n]["decode"])
            their_total = statistics.median(theirs[(layout, n)]["total"])
            our_total = statistics.median(ours[n]["total"])
            print(f"| {layout} | {n} | {their_decode:.1f} | {our_decode:.1f} | {our_decode / their_decode:.3f} "
                  f"| {their_total:.1f} | {our_total:.1f} | {our_total / their_total:.3f} |")
            summary.setdefault(layout, {})[n] = {
                "batched_bench_decode": their_decode, "rein_decode": our_decode,
                "batched_bench_total": their_total, "rein_total": our_total,
            }
    print(json.dumps({"rounds": args.rounds, "layouts": summary}))


if __name__ == "__main__":
    main()
