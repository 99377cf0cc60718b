"""What one /rank request costs inside the service, wall and CPU, without HTTP (issue 11).

    .venv/bin/python bench/request_cost.py [--model models/default] [--requests 60]

The service is built as `pictorank serve` builds it (empty cache directory, default vocabulary,
clue-giver not involved), then ranks test.csv's 30-option rows one at a time:

- new clue + 30 new options: every option made unique to its request (" #n"), nothing encoded before;
- new clue, options in vocabulary: test's rows as they are (its options were embedded at start-up);
- repeated: the same rows again.

CPU time (all threads of the process) moves much less with the machine's other load than wall
time, so it says what a request costs where HTTP latency figures are distorted by a shared CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "default"))
    parser.add_argument("--requests", type=int, default=60, help="requests per kind (default 60)")
    args = parser.parse_args()
    os.environ["PICTORANK_CACHE_DIR"] = tempfile.mkdtemp(prefix="pictorank-request-cost-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from pictorank.api.service import Clue, build_service
    from pictorank.api.settings import Settings
    from pictorank.puzzles import load_hints, load_puzzles

    started = time.perf_counter()
    service = build_service(Settings(model_dir=args.model))
    service.self_test()
    print(f"service built and self-tested in {time.perf_counter() - started:.1f} s; torch imported: "
          f"{'torch' in sys.modules}; load average {os.getloadavg()[0]:.1f}")
    vocab = load_hints(DATA / "hint_descriptions.csv")
    rows = [p for p in load_puzzles(DATA / "test.csv", vocab) if p.subtask_id == 3]
    n = args.requests
    kinds = {
        "new clue + 30 new options": [Clue(tuple(vocab.describe(p.hints)), tuple(f"{o} #{i}" for o in p.options))
                                      for i, p in enumerate(rows[:n])],
        "new clue, options in vocabulary": [Clue(tuple(vocab.describe(p.hints)), tuple(p.options)) for p in rows[n : 2 * n]],
    }
    kinds["repeated"] = kinds["new clue, options in vocabulary"]
    print("| request | wall p50 ms | wall p95 ms | CPU p50 ms |\n|---|---|---|---|")
    for name, clues in kinds.items():
        wall, cpu = [], []
        for clue in clues:
            t, c = time.perf_counter(), time.process_time()
            service.rank([clue])
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(f"| {name} | {np.median(wall) * 1000:.1f} | {np.percentile(wall, 95) * 1000:.1f} | {np.median(cpu) * 1000:.1f} |")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
