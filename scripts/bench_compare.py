"""Interleaves rein's engine bench with llama.cpp's llama-bench and prints medians.

    python3 scripts/bench_compare.py --llama-bench PATH/TO/llama-bench [--rounds 5] \
        [--models tiny,small] [--threads 2]

Each round runs `llama-bench -p 512 -n 64 -r 3` on every model, then
`cargo bench --bench engine` (criterion, 10 samples per test), so slow and fast
moments of a noisy machine fall on both. Reported: the median tokens/s over all
llama-bench samples and over the per-round criterion medians, and their ratio.
`llama-bench` is built outside this repository (see docs/BENCHMARKS.md).
"""
import argparse
import json
import os
import statistics
import subprocess

TESTS = {"pp512": (512, 0), "tg64": (0, 64)}


def model_path(name):
    out = subprocess.run(["target/release/rein", "models", "path", name], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def llama_bench(binary, path, threads):
    out = subprocess.run(
        [binary, "-m", path, "-t", str(threads), "-p", "512", "-n", "64", "-r", "3", "-o", "json"],
        capture_output=True, text=True, check=True,
    )
    results = {}
    for row in json.loads(out.stdout):
        test = "pp512" if row["n_prompt"] == 512 else "tg64"
        results[test] = row["samples_ts"]
    return results


def rein_bench(models, threads):
    env = dict(os.environ, REIN_BENCH_MODELS=",".join(models), REIN_BENCH_THREADS=str(threads))
    subprocess.run(["cargo", "bench", "--bench", "engine"], env=env, check=True, capture_output=True)
    results = {}
    for name in models:
        for test, (p, n) in TESTS.items():
            path = os.path.join("target", "criterion", f"{name}_t{threads}", test, "new", "estimates.json")
            with open(path) as f:
                median_ns = json.load(f)["median"]["point_estimate"]
            results[(name, test)] = (p + n) / (median_ns / 1e9)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-bench", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--models", default="tiny,small")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    models = args.models.split(",")
    paths = {m: model_path(m) for m in models}
    ours = {(m, t): [] for m in models for t in TESTS}
    theirs = {(m, t): [] for m in models for t in TESTS}
    for round_index in range(args.rounds):
        for m in models:
            for test, samples in llama_bench(args.llama_bench, paths[m], args.threads).items():
                theirs[(m, test)].extend(samples)
        for key, tps in rein_bench(models, args.threads).items():
            ours[key].append(tps)
        print(f"round {round_index + 1}/{args.rounds} done", flush=True)
    print(f"| model | test | llama-bench t/s (median) | rein t/s (median) | rein / llama-bench |")
    print("|---|---|---:|---:|---:|")
    for m in models:
        for test in TESTS:
            a = statistics.median(theirs[(m, test)])
            b = statistics.median(ours[(m, test)])
            print(f"| {m} | {test} | {a:.1f} | {b:.1f} | {b / a:.3f} |")


if __name__ == "__main__":
    main()
