"""Fine-tuning's threads: what a second thread buys a fine-tune, and what the core it leaves can do.

    PICTORANK_CACHE_DIR=.cache/embeddings .venv/bin/python bench/finetune_threads.py [--steps 20] [--words 20000]

Each job runs in a fresh process (as `pictorank train`'s fine-tuning process does), alone or two
side by side, on the same machine in one run:

- a fine-tune of `--steps` steps of the shipped recipe (batch 32, bf16) on train's first clues,
  on 2 PyTorch threads and on 1;
- embedding `--words` lexicon words with the base model's int8 export (what the lexicon stage and
  open play's folds do), on 2 onnxruntime threads and on 1;
- side by side: a 1-thread fine-tune beside a 1-thread embedding (what `pictorank train` does
  while its fold encoders fine-tune), and two 1-thread fine-tunes.

Prints each job's seconds and peak resident memory (its VmHWM), the wall time of each row, and
the fine-tunes' weight digests (a thread count changes the weights in their last bits).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from harness import reference_line  # bench/harness.py, beside this file

HERE = Path(__file__).resolve()


def finetune_job(steps: int, threads: int) -> dict:
    from pictorank.encoders import load_base_model
    from pictorank.puzzles import load_hints, load_puzzles, to_queries
    from pictorank.train.finetune import FinetuneParams, finetune, weights_digest

    vocab = load_hints("data/bliss/hint_descriptions.csv")
    train = to_queries(load_puzzles("data/bliss/train.csv", vocab), vocab)[: steps * 32]
    model = load_base_model()
    started = time.perf_counter()
    finetune(model, train, FinetuneParams(epochs=1.0, threads=threads))
    return {"seconds": time.perf_counter() - started, "digest": weights_digest(model)[:8]}


def embed_job(words: int, threads: int, folder: str) -> dict:
    from pictorank.encoders.onnx import OnnxSentenceEncoder
    from pictorank.lexicon import DEFAULT_SOURCE, load_lexicon

    texts = list(load_lexicon(DEFAULT_SOURCE).words[:words])
    encoder = OnnxSentenceEncoder(Path(folder), threads=threads)
    started = time.perf_counter()
    encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    return {"seconds": time.perf_counter() - started}


def peak_mb() -> int:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(status["VmHWM"].split()[0]) // 1024


def start(args: argparse.Namespace, job: str, threads: int, folder: str) -> subprocess.Popen:
    command = [sys.executable, str(HERE), "--job", job, "--threads", str(threads), "--steps", str(args.steps),
               "--words", str(args.words), "--folder", folder]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def run_row(args: argparse.Namespace, jobs: list[tuple[str, int]], folder: str) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    processes = [start(args, job, threads, folder) for job, threads in jobs]
    results = []
    for (job, threads), process in zip(jobs, processes):
        out, _ = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"{job} on {threads} thread(s) failed")
        results.append({"job": job, "threads": threads, **json.loads(out.strip().splitlines()[-1])})
    return time.perf_counter() - started, results


def base_export() -> str:
    """The base model's int8 export, made once into the cache (so no row pays for it)."""
    from pictorank.encoders import base_model_version, load_base_model
    from pictorank.encoders.onnx import cached_export
    from pictorank.settings import CommonSettings

    name = f"{base_model_version()}+int8"
    return str(cached_export(load_base_model, name, "int8", CommonSettings().cache_dir))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--words", type=int, default=20000)
    parser.add_argument("--job", choices=("finetune", "embed"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--folder", default="")
    args = parser.parse_args()
    from pictorank.settings import use_offline_environment

    use_offline_environment()
    if args.job is not None:  # a child: one job, its result as the last line
        result = (finetune_job(args.steps, args.threads) if args.job == "finetune"
                  else embed_job(args.words, args.threads, args.folder))
        print(json.dumps({**result, "peak_mb": peak_mb()}))
        return
    print(reference_line())
    folder = base_export()
    rows = [
        ("fine-tune, 2 threads", [("finetune", 2)]),
        ("fine-tune, 1 thread", [("finetune", 1)]),
        (f"embed {args.words} words, 2 threads", [("embed", 2)]),
        (f"embed {args.words} words, 1 thread", [("embed", 1)]),
        ("fine-tune and embed side by side, 1 thread each", [("finetune", 1), ("embed", 1)]),
        ("two fine-tunes side by side, 1 thread each", [("finetune", 1), ("finetune", 1)]),
    ]
    print(f"\n| row ({args.steps} fine-tuning steps) | wall s | each job: s, peak MB | peak MB summed | digests |")
    print("|---|---|---|---|---|")
    for name, jobs in rows:
        wall, results = run_row(args, jobs, folder)
        each = "; ".join(f"{r['job']} {r['seconds']:.1f} s, {r['peak_mb']} MB" for r in results)
        digests = ", ".join(r["digest"] for r in results if "digest" in r)
        print(f"| {name} | {wall:.1f} | {each} | {sum(r['peak_mb'] for r in results)} | {digests} |", flush=True)


if __name__ == "__main__":
    main()
