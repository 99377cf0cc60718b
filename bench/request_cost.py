"""What one /rank request costs inside the service, wall and CPU, without HTTP (issue 11).

    .venv/bin/python bench/request_cost.py [--model models/default] [--model DIR ...] [--serial-too]
                                            [--requests 60]

Each model is served as `pictorank serve` serves it (empty cache directory, default vocabulary,
clue-giver not involved), in a fresh process of its own, which ranks test.csv's 30-option rows:

- new clue + 30 new options: every option made unique to its request (" #n"), nothing encoded before;
- new clue, options in vocabulary: test's rows as they are (its options were embedded at start-up);
- repeated: the same rows again;
- then new clues + new options from 4 threads at once (as 4 HTTP clients would call the service):
  requests per second, and the process's CPU use in cores.

`--serial-too` adds, for each model, a run with the two encoders one after the other, as before
they encoded side by side (pictorank.features.extractor.encode_side_by_side): what that change
gained. CPU time (all threads of the process) moves much less with the machine's other load than
wall time, so it says what a request costs where latency figures are distorted by a shared CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from harness import reference_line  # bench/harness.py, beside this file

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"
KINDS = ("new clue + 30 new options", "new clue, options in vocabulary", "repeated")


def _serial_encoders() -> None:
    """Encode with one encoder after the other (the behaviour before side-by-side encoding)."""
    import pictorank.features.extractor as extractor

    def one_after_the_other(encoders, texts):  # type: ignore[no-untyped-def]
        for encoder in {id(e): e for e in encoders}.values():
            encoder.encode(texts)

    extractor.encode_side_by_side = one_after_the_other


def worker(model: str, serial: bool, n: int) -> dict:
    """In a fresh process with an empty cache: build the service and time each kind of request."""
    from pictorank.api.service import Clue, build_service
    from pictorank.api.settings import Settings
    from pictorank.puzzles import load_hints, load_puzzles

    if serial:
        _serial_encoders()
    started = time.perf_counter()
    service = build_service(Settings(model_dir=model))
    service.self_test()
    out: dict = {"ready_s": time.perf_counter() - started, "torch": "torch" in sys.modules}
    vocab = load_hints(DATA / "hint_descriptions.csv")
    rows = [p for p in load_puzzles(DATA / "test.csv", vocab) if p.subtask_id == 3]

    def new(tag: str, chosen: list) -> list[Clue]:
        return [Clue(tuple(vocab.describe(p.hints)), tuple(f"{o} #{tag}{i}" for o in p.options)) for i, p in enumerate(chosen)]

    known = [Clue(tuple(vocab.describe(p.hints)), tuple(p.options)) for p in rows[n : 2 * n]]
    for name, clues in zip(KINDS, (new("a", rows[:n]), known, known)):
        wall, cpu = [], []
        for clue in clues:
            t, c = time.perf_counter(), time.process_time()
            service.rank([clue])
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        out[name] = {"p50": np.median(wall) * 1000, "p95": np.percentile(wall, 95) * 1000, "cpu": np.median(cpu) * 1000}
    clues = new("b", rows[: 2 * n])
    threads = [threading.Thread(target=lambda part: [service.rank([c]) for c in part], args=(clues[i::4],)) for i in range(4)]
    t, c = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - t
    out["4 threads"] = {"rps": len(clues) / wall, "cores": (time.process_time() - c) / wall}
    return out


def run(model: str, serial: bool, n: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="pictorank-request-cost-") as cache:
        env = {**os.environ, "PICTORANK_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1"}
        argv = [sys.executable, __file__, "--worker", model, "--requests", str(n), *(["--serial-too"] if serial else [])]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"worker {model} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="model directory (repeatable; default models/default)")
    parser.add_argument("--requests", type=int, default=60, help="requests per kind (default 60)")
    parser.add_argument("--serial-too", action="store_true", help="also run each model with its encoders one after the other")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.serial_too, args.requests)))
        return
    models = args.model or [str(ROOT / "models" / "default")]
    print(f"at the start, {reference_line()}")
    print("| model | encoders | request | wall p50 ms | wall p95 ms | CPU p50 ms |\n|---|---|---|---|---|---|")
    for model in models:
        for serial in ([False, True] if args.serial_too else [False]):
            found = run(model, serial, args.requests)
            label = (Path(model).name, "one after the other" if serial else "side by side")
            for name in KINDS:
                row = found[name]
                print(f"| {label[0]} | {label[1]} | {name} | {row['p50']:.1f} | {row['p95']:.1f} | {row['cpu']:.1f} |")
            many = found["4 threads"]
            print(f"| {label[0]} | {label[1]} | new clues + new options, 4 threads | {many['rps']:.1f} req/s | "
                  f"{many['cores']:.2f} cores busy | ready {found['ready_s']:.1f} s, torch {'yes' if found['torch'] else 'no'} |")
    print(f"\nat the end, {reference_line()}")


if __name__ == "__main__":
    main()
