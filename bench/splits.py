"""The ELCo in-domain split that bench/transfer.py (ranking) and bench/suggest.py (clue-giving)
both measure on, so that their "ELCo, trained in-domain" rows are about the same held-out phrases.

ELCo's dev half (data/elco/elco_dev.csv) is split by answer phrase, 60/20/20 % into train, val
and test, answers shuffled with a seed: every clue of a phrase lands in one part, so the test
phrases are never seen in training (831 rows: 500 / 165 / 166 of 63 / 21 / 21 phrases at seed 13).
"""

from __future__ import annotations

import random
from typing import Callable, Sequence, TypeVar

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
