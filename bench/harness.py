"""The benches' one shared harness: what every bench may import besides the package itself.

- `reference_line`: how fast this machine is right now, so that speed tables from different days
  can be compared. The 2-core machine the benches run on is shared, and its speed per core moves
  over a day by more than the load average shows (on 1 Dec 2026 the same code measured 55 ms of
  CPU per never-seen request in the morning and 95 ms at 14:20 UTC). Each speed bench prints it.
- `split_by_answer` and the ELCo split (ELCO_SHARES, ELCO_SEED) that bench/transfer.py (ranking)
  and bench/suggest.py (clue-giving) both measure on: ELCo's dev half split by answer phrase,
  60/20/20 % into train, val and test, so their "ELCo, trained in-domain" rows are about the same
  held-out phrases (831 rows: 500 / 165 / 166 of 63 / 21 / 21 phrases at seed 13).
- `ForgetfulEncoder`: the task's script keeps no embeddings; a bench of never-seen input uses it.
- `nested_start` and OUTER_FOLDS: what the benches that nest a train CV around the whole recipe
  (bench/final_epochs.py, bench/inner_folds.py) start from: train's clues, the exact base encoder
  over the settings' cache, their own outer folds by answer, whatever the recipe's inner ones,
  and the lexicon.

Folds by answer come from the package (pictorank.evaluation.folds), standard errors clustered by
answer from pictorank.evaluation.significance: the benches choose nothing the package cannot.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from typing import Callable, Sequence, TypeVar

import numpy as np

from pictorank.encoders import Encoder
from pictorank.lexicon import DEFAULT_SOURCE, Lexicon, load_lexicon
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.settings import CommonSettings
from pictorank.train import TrainConfig
from pictorank.train.fold_encoders import query_folds


def python_loop_ms(repeats: int = 3) -> float:
    """Best of `repeats` timings of a fixed pure-Python loop (the interpreter-bound part of a
    request: feature assembly, JSON, routing)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        total = 0
        for i in range(1_000_000):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return best * 1000


def matmul_ms(repeats: int = 3) -> float:
    """Best of `repeats` timings of 50 float32 384x384 matrix products (the numeric part: encoder
    layers and cosine tables are products of this size)."""
    matrix = np.random.default_rng(0).random((384, 384), dtype=np.float32)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(50):
            matrix @ matrix
        best = min(best, time.perf_counter() - start)
    return best * 1000


def reference_line() -> str:
    """One line for a bench's output: load average and the two reference timings (lower is faster)."""
    return (f"machine: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
            f"CPU reference: Python loop {python_loop_ms():.0f} ms, numpy matmul {matmul_ms():.0f} ms "
            f"(1 Dec 2026 14:25 UTC: 57 ms, 31 ms)")

OUTER_FOLDS = 3


def nested_start(parser: argparse.ArgumentParser
                 ) -> tuple[argparse.Namespace, list[Query], Encoder, np.ndarray, Lexicon]:
    """A nested bench's start, after its own options: `--data` added and the arguments parsed,
    the machine's reference line printed, and train's clues, the exact base encoder over the
    settings' cache (the recipe fine-tunes from it), each clue's outer fold (OUTER_FOLDS by answer,
    seeded apart from the recipe's own inner folds) and the lexicon open play guesses from."""
    parser.add_argument("--data", default="data/bliss")
    args = parser.parse_args()
    print(reference_line())
    vocab = load_hints(f"{args.data}/hint_descriptions.csv")
    train = to_queries(load_puzzles(f"{args.data}/train.csv", vocab), vocab)
    settings = CommonSettings()
    exact = Encoder(cache_dir=settings.cache_dir, max_cached=settings.max_cached_strings)
    outer = query_folds(train, OUTER_FOLDS, TrainConfig().seed + 1)
    return args, train, exact, outer, load_lexicon(DEFAULT_SOURCE)


Item = TypeVar("Item")
ELCO_SHARES = (0.6, 0.2, 0.2)  # train, val (the training's held-out report), test
ELCO_SEED = 13


def split_by_answer(items: Sequence[Item], answer_of: Callable[[Item], str], shares: Sequence[float],
                    seed: int) -> list[list[Item]]:
    """`items` (CSV rows or puzzles) split so that all items of an answer land in one part; the
    answers are sorted, then shuffled with `seed`, then cut at the cumulative `shares`."""
    answers = sorted({answer_of(item) for item in items})
    random.Random(seed).shuffle(answers)
    bounds, total = [], 0.0
    for share in shares[:-1]:
        total += share
        bounds.append(round(total * len(answers)))
    part_of = {a: sum(i >= b for b in bounds) for i, a in enumerate(answers)}
    parts: list[list[Item]] = [[] for _ in shares]
    for item in items:
        parts[part_of[answer_of(item)]].append(item)
    return parts


class ForgetfulEncoder(Encoder):
    """The task's script keeps no embeddings: every call sends its strings through the model again."""

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        self._vectors.clear()
        return super().encode(texts, show_progress)
