"""Quality of the learned model on its inference runtime (ONNX, issue 11) against PyTorch.

    .venv/bin/python bench/runtime.py --model models/default [--model /tmp/m_fp32 ...]
    .venv/bin/python bench/runtime.py --model models/default --reference /tmp/before-issue-11

Each model directory is loaded twice, in fresh processes with empty embedding caches: once with
`PICTORANK_ENCODER_RUNTIME=torch` (the sentence-transformers encoders, as before the export
existed) and once as it ships (the ONNX encoders and the embedded vocabulary); each ranks Bliss
val and ELCo dev (the vocabulary the model never saw, as bench/transfer.py ranks it). The table
gives score / Hits@1 / MRR and the difference to PyTorch; issue 11 allows 0.002 score and 0.01
Hits@1. A directory without an ONNX export runs on PyTorch either way. `--reference DIR` (a
model trained before issue 11's changes, run on PyTorch) becomes the row every difference is
taken from: the unoptimised model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "bliss val": (ROOT / "data" / "bliss" / "val.csv", ROOT / "data" / "bliss" / "hint_descriptions.csv"),
    "elco dev": (ROOT / "data" / "elco" / "elco_dev.csv", ROOT / "data" / "elco" / "hint_descriptions.csv"),
}


def worker(model: str) -> dict:
    """In a fresh process: rank every set with the model as the environment says to load it."""
    from pictorank.encoders import Encoder
    from pictorank.evaluation import evaluate_rankings
    from pictorank.puzzles import load_hints, load_puzzles
    from pictorank.ranker import load_ranker, rank_puzzles
    from pictorank.settings import CommonSettings

    started = time.perf_counter()
    settings = CommonSettings()
    ranker = load_ranker(model, encoder=Encoder(cache_dir=settings.cache_dir), runtime=settings.encoder_runtime)
    out = {"load_s": time.perf_counter() - started}
    for name, (puzzles_file, hints_file) in SETS.items():
        vocab = load_hints(hints_file)
        puzzles = load_puzzles(puzzles_file, vocab)
        started = time.perf_counter()
        rankings = rank_puzzles(ranker, puzzles, vocab)
        out[name] = {**evaluate_rankings(puzzles, rankings)["overall"], "seconds": time.perf_counter() - started}
    out["torch_imported"] = "torch" in sys.modules
    return out


def run(model: str, runtime: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="pictorank-runtime-") as cache:
        env = {**os.environ, "PICTORANK_ENCODER_RUNTIME": runtime, "PICTORANK_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1"}
        done = subprocess.run([sys.executable, __file__, "--worker", model], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"worker {model} ({runtime}) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="model directory (repeatable; default models/default)")
    parser.add_argument("--reference", help="the unoptimised model (on PyTorch) the differences are taken from")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return
    print(f"load average at start: {os.getloadavg()}", file=sys.stderr)
    lines = ["| model | runtime | set | score | Hits@1 | MRR | d score | d Hits@1 | rank s | torch imported |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    baseline = run(args.reference, "torch") if args.reference else None
    if baseline is not None:
        for name in SETS:
            r = baseline[name]
            lines.append(f"| {Path(args.reference).name} (reference) | torch | {name} | {r['score']:.4f} "
                         f"| {r['hits@1']:.4f} | {r['mrr']:.4f} | | | {r['seconds']:.1f} | yes |")
    for model in args.model or [str(ROOT / "models" / "default")]:
        own = run(model, "torch")
        reference = baseline or own
        shipped = run(model, "onnx")
        for runtime, result in (("torch", own), ("as shipped", shipped)):
            for name in SETS:
                r, ref = result[name], reference[name]
                lines.append(f"| {Path(model).name} | {runtime} | {name} | {r['score']:.4f} | {r['hits@1']:.4f} "
                             f"| {r['mrr']:.4f} | {r['score'] - ref['score']:+.4f} | {r['hits@1'] - ref['hits@1']:+.4f} "
                             f"| {r['seconds']:.1f} | {'yes' if result['torch_imported'] else 'no'} |")
    print(f"load average at end: {os.getloadavg()}", file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
