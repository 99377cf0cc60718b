"""Batch ranking benchmark: seed vs cosine (cold and warm disk cache), speed, memory and quality.

    .venv/bin/python bench/batch.py            # ranks all of val; about 1-2 minutes
    .venv/bin/python bench/batch.py --never-seen-only --model models/default   # issue 11's table only

First, never-seen input (issue 11): whole `pictorank predict` processes on test.csv, each with an
empty cache directory of its own (imports, model load, encoding, ranking and writing included),
beside the task's seed script (the seed worker below, on test.csv, whole process); then the same
command on 20,000 rows (test.csv's rows repeated in order, new ids), where "rank s" is the CLI's
own figure, after loading. `--model DIR` adds a model (default: models/default when it exists).

Each method runs in its own fresh Python process, one after another, so that peak memory
(`ru_maxrss`, which counts torch and the model, unlike tracemalloc) belongs to that method alone.

What is timed ("rank s"): from after the model is loaded to the last ranking, i.e. building the
ranker and its Encoder (for the warm run: reading the disk cache), encoding, scoring and sorting
every row, and writing the disk cache. Not timed: imports, model load and reading the CSVs;
"process s" is the whole subprocess wall time, imports and model load included. "CPU s" is the
process's CPU time over the timed part: on a machine shared with other jobs, wall time swells
with their load while CPU time mostly does not, so both are shown.

- seed: the task's baseline, faithful to its script: one row at a time, and no cache of any kind
  (the Encoder forgets every vector before each call, so every string goes through the model).
- cosine cold: the default CosineRanker, batch-encoding the distinct strings, with an empty
  on-disk cache directory (which it fills).
- cosine warm: a second process reusing that directory: nothing is encoded and the model is never
  loaded (the Encoder loads it lazily, as the CLI does).
- cosine-weighted cold: position-weighted pooling of per-hint embeddings (equal weights), with a
  disk cache of its own, empty: the distinct hint descriptions are shared across clues, so it
  encodes fewer tokens than the joined-text default, at some cost in quality.

A second table measures cosine settings (joined text vs position-weighted pooling of per-hint
embeddings) on train and val: the first pictogram (the classifier) is not always the most
informative one.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from harness import ForgetfulEncoder, reference_line  # bench/harness.py, beside this file

from pictorank.encoders import Encoder, base_model_version, load_base_model
from pictorank.evaluation import evaluate_rankings, format_table
from pictorank.puzzles import load_hints, load_puzzles
from pictorank.query import Query
from pictorank.ranker import CosineRanker, Ranker, SeedRanker, rank_puzzles

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"
# Position weights of the per-hint pooling variants (None = the product's joined-text cosine).
SETTINGS: dict[str, list[float] | None] = {
    "joined (default)": None,
    "weighted 1 (equal)": [1.0],
    "weighted 2,1": [2.0, 1.0],
    "weighted 0.5,1": [0.5, 1.0],
    "weighted 0.25,1": [0.25, 1.0],
    "weighted 0,1 (no first)": [0.0, 1.0],
    "weighted 1,0 (first only)": [1.0, 0.0],
}
# The cosine runs of the speed table besides the default (joined) one: run name -> position weights.
COLD_RUNS: dict[str, list[float]] = {"cosine-weighted": [1.0]}


class WeightedCosineRanker(CosineRanker):
    """Cosine to a position-weighted mean of per-hint embeddings (renormalised): the alternative to
    joined text that this bench measures. `weights[i]` weighs the i-th hint; later hints take the last."""

    def __init__(self, encoder: Encoder, weights: list[float]) -> None:
        super().__init__(encoder)
        self.weights = weights

    def score(self, queries: list[Query]) -> list[np.ndarray]:
        self.encoder.encode(list(dict.fromkeys(s for q in queries for s in (*q.hints, *q.options))))
        scores = []
        for query in queries:
            hints = self.encoder.encode(list(query.hints))
            w = np.array([self.weights[min(i, len(self.weights) - 1)] for i in range(len(hints))], dtype=np.float32)
            pooled = (w[:, None] * hints).sum(axis=0)
            pooled /= max(float(np.linalg.norm(pooled)), 1e-12)
            scores.append(self.encoder.encode(list(query.options)) @ pooled)
        return scores


def cosine_ranker(encoder: Encoder, weights: list[float] | None) -> Ranker:
    return CosineRanker(encoder) if weights is None else WeightedCosineRanker(encoder, weights)


def cpu_seconds() -> float:
    """CPU time of this process (all threads): unlike wall time, barely changed by other processes."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_split(data: Path, split: str):
    vocab = load_hints(data / "hint_descriptions.csv")
    return vocab, load_puzzles(data / f"{split}.csv", vocab)


def worker(method: str, split: str, data: Path, cache_dir: str | None) -> dict[str, Any]:
    """Rank a whole split with one method in this process; timings exclude imports and model load."""
    vocab, puzzles = load_split(data, split)
    model_seconds = 0.0
    model = None
    if method != "cosine-warm":  # the warm run must not need the model: it is loaded lazily
        started = time.perf_counter()
        model = load_base_model()
        model.encode(["warm-up"])  # first-call overhead is part of loading, not of ranking
        model_seconds = time.perf_counter() - started
    rss_before = peak_rss_mb()

    started, cpu_started = time.perf_counter(), cpu_seconds()
    if method == "seed":
        encoder = ForgetfulEncoder(model=model, model_id=base_model_version())
        ranker = SeedRanker(encoder)
    else:
        encoder = Encoder(model=model, model_id=base_model_version(), cache_dir=cache_dir)
        ranker = cosine_ranker(encoder, COLD_RUNS.get(method))
    rankings = rank_puzzles(ranker, puzzles, vocab)
    encoder.flush()  # writing the disk cache is part of the timed work, as in the CLI
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started

    return {
        "method": method,
        "rows": len(puzzles),
        "model_load_s": model_seconds,
        "model_loaded": encoder._model is not None,
        "rank_s": seconds,
        "cpu_s": cpu,
        "encoded": encoder.encoded_count,
        "peak_rss_mb": peak_rss_mb(),
        "rss_growth_mb": peak_rss_mb() - rss_before,
        "rankings": rankings,
    }


def settings_worker(data: Path, cache_dir: str | None) -> dict[str, Any]:
    """Quality of each cosine setting on train and val (the disk cache spares re-encoding)."""
    encoder = Encoder(model_id=base_model_version(), cache_dir=cache_dir)
    results: dict[str, Any] = {}
    for split in ("train", "val"):
        vocab, puzzles = load_split(data, split)
        for name, weights in SETTINGS.items():
            rankings = rank_puzzles(cosine_ranker(encoder, weights), puzzles, vocab)
            results.setdefault(name, {})[split] = evaluate_rankings(puzzles, rankings)["overall"]
    return results


def run_in_subprocess(args: list[str]) -> tuple[dict[str, Any], float]:
    """Run this script as a worker in a fresh interpreter; returns its JSON and wall seconds."""
    started = time.perf_counter()  # the worker goes offline itself (pictorank.settings.use_offline_environment)
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"worker {args} failed:\n{done.stderr}")
    return json.loads(done.stdout), seconds


def speed_table(runs: list[dict[str, Any]]) -> str:
    seed_rate, seed_cpu = runs[0]["rows"] / runs[0]["rank_s"], runs[0]["cpu_s"]
    header = (
        f"| {'method':<15} | rows | rank s | rows/s | vs seed | CPU s | vs seed (CPU) | strings encoded "
        f"| model loaded | process s | peak RSS MB | RSS growth MB |"
    )
    lines = [header, "|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|"]
    for run in runs:
        rate = run["rows"] / run["rank_s"]
        lines.append(
            f"| {run['method']:<15} | {run['rows']:>4} | {run['rank_s']:>6.2f} | {rate:>6.0f} "
            f"| {rate / seed_rate:>6.1f}x | {run['cpu_s']:>5.2f} | {seed_cpu / max(run['cpu_s'], 1e-6):>12.1f}x "
            f"| {run['encoded']:>15} | {'yes' if run['model_loaded'] else 'no':>12} "
            f"| {run['process_s']:>9.1f} | {run['peak_rss_mb']:>11.0f} | {run['rss_growth_mb']:>13.0f} |"
        )
    return "\n".join(lines)


def settings_table(results: dict[str, Any]) -> str:
    header = f"| {'cosine setting':<26} | train score | train hits@1 | train mrr | val score | val hits@1 | val mrr |"
    lines = [header, "|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|"]
    for name, by_split in results.items():
        train, val = by_split["train"], by_split["val"]
        lines.append(
            f"| {name:<26} | {train['score']:>11.4f} | {train['hits@1']:>12.4f} | {train['mrr']:>9.4f} "
            f"| {val['score']:>9.4f} | {val['hits@1']:>10.4f} | {val['mrr']:>7.4f} |"
        )
    return "\n".join(lines)


def predict_run(input_csv: Path, model: str | None, method: str | None, cache_dir: str) -> dict[str, Any]:
    """One whole `pictorank predict` process: its wall time, CPU time, peak RSS and ranking seconds."""
    # /usr/bin/time reports this process's own peak RSS (getrusage's children figure is the largest child so far)
    command = ["/usr/bin/time", "-f", "peak_rss_kb=%M", str(Path(sys.executable).with_name("pictorank")), "predict", "--input", str(input_csv),
               "--hints", str(DATA / "hint_descriptions.csv"), "--output", str(Path(cache_dir) / "submission.csv"),
               "--cache-dir", cache_dir]
    command += ["--model", model] if model else ["--method", method or "cosine"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{command} failed:\n{done.stderr[-3000:]}")
    found = re.search(r"rows ranked by \S+ in ([0-9.]+) s", done.stderr)
    rss = re.search(r"peak_rss_kb=([0-9]+)", done.stderr)
    return {"process_s": seconds, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "rank_s": float(found.group(1)) if found else float("nan"),
            "peak_rss_mb": int(rss.group(1)) / 1024 if rss else float("nan")}


def repeated_rows(source: Path, rows: int, target: Path) -> Path:
    """`rows` rows of `source` repeated in order, with new ids: a large batch of real traffic."""
    with open(source, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header, body = next(reader), list(reader)
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for i in range(rows):
            writer.writerow([f"big_{i:06d}", *body[i % len(body)][1:]])
    return target


def never_seen_table(models: list[str], big_rows: int) -> str:
    """Whole processes from empty caches on test.csv (and `big_rows` rows), against the seed script."""
    lines = ["| run | input | process s | vs seed script | CPU s | rank s (after loading) | rows/s after loading "
             "| peak RSS MB |", "|---|---|---|---|---|---|---|---|"]
    test_rows = len(load_puzzles(DATA / "test.csv", load_hints(DATA / "hint_descriptions.csv")))
    with tempfile.TemporaryDirectory(prefix="pictorank-never-seen-") as root:
        print("never seen: seed script on test.csv ...", file=sys.stderr)
        seed, seed_process = run_in_subprocess(["--worker", "seed", "--split", "test", "--data", str(DATA)])
        lines.append(f"| seed (task script) | test.csv | {seed_process:.1f} | 1.0x | - | {seed['rank_s']:.1f} "
                     f"| {test_rows / seed['rank_s']:.0f} | {seed['peak_rss_mb']:.0f} |")
        big = repeated_rows(DATA / "test.csv", big_rows, Path(root) / "big.csv")
        for name, model, method in [("cosine", None, "cosine"), *((Path(m).name, m, None) for m in models)]:
            for label, input_csv, rows in (("test.csv", DATA / "test.csv", test_rows), (f"{big_rows:,} rows", big, big_rows)):
                print(f"never seen: {name} on {label} ...", file=sys.stderr)
                run = predict_run(input_csv, model, method, tempfile.mkdtemp(dir=root))
                ratio = f"{seed_process / run['process_s']:.1f}x" if label == "test.csv" else "-"
                lines.append(f"| {name} | {label} | {run['process_s']:.1f} | {ratio} | {run['cpu_s']:.1f} "
                             f"| {run['rank_s']:.1f} | {rows / run['rank_s']:.0f} | {run['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="val", help="file of --data to rank for the speed table (default: val)")
    parser.add_argument("--data", type=Path, default=DATA, help="directory with the task's CSV files")
    parser.add_argument("--model", action="append", default=[], help="model directory for the never-seen table "
                        "(repeatable; default models/default when it exists)")
    parser.add_argument("--big-rows", type=int, default=20_000, help="rows of the large never-seen run (default 20,000)")
    parser.add_argument("--never-seen-only", action="store_true", help="only the never-seen table (issue 11)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker == "settings":
        print(json.dumps(settings_worker(args.data, args.cache_dir)))
        return
    if args.worker:
        print(json.dumps(worker(args.worker, args.split, args.data, args.cache_dir)))
        return

    _, puzzles = load_split(args.data, args.split)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    models = args.model or ([str(ROOT / "models" / "default")] if (ROOT / "models" / "default" / "ranker.json").is_file() else [])
    load_start = os.getloadavg()[0]
    machine_start = reference_line()
    print("## Never-seen input: whole `pictorank predict` processes, each from an empty cache\n")
    print(never_seen_table(models, args.big_rows))
    print(f"\nload average (1 min) {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores")
    print(f"at start, {machine_start}\nat end, {reference_line()}\n")
    if args.never_seen_only:
        return
    with tempfile.TemporaryDirectory(prefix="pictorank-bench-") as cache_dir:
        runs = []
        for method in ("seed", "cosine-cold", "cosine-warm", *COLD_RUNS):
            print(f"running {method} ...", file=sys.stderr)
            own_cache = str(Path(cache_dir) / method) if method in COLD_RUNS else cache_dir
            result, process_seconds = run_in_subprocess(
                ["--worker", method, "--split", args.split, "--data", str(args.data), "--cache-dir", own_cache]
            )
            result["process_s"] = process_seconds
            runs.append(result)
        print("running cosine settings on train and val ...", file=sys.stderr)
        settings, _ = run_in_subprocess(["--worker", "settings", "--data", str(args.data), "--cache-dir", cache_dir])
    print(f"load average at end: {os.getloadavg()[0]:.1f}", file=sys.stderr)

    print(f"## Speed and memory: all {len(puzzles)} rows of {args.split}\n")
    print(speed_table(runs))
    print(f"\n## Quality on {args.split}\n")
    print(format_table({run["method"]: evaluate_rankings(puzzles, run["rankings"]) for run in runs}))
    print("\n## Cosine settings (quality)\n")
    print(settings_table(settings))


if __name__ == "__main__":
    main()
