"""Folds by answer: the one way every cross-validation here splits puzzles.

Answers never repeat across the data's splits, so a choice made by CV must not see a fold's
answers while fitting: all puzzles of one answer share a fold. Seeded and independent of the
process (no `hash()`), so training, the clue-giver and every bench split alike, run after run.
"""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np


def answer_folds(answers: Sequence[str | None], n_folds: int, seed: int) -> np.ndarray:
    """A fold number (0 to n_folds - 1) for each answer; equal answers share a fold. The distinct
    answers are sorted, shuffled by `seed` and dealt round-robin, so folds differ in size by at
    most one answer."""
    distinct = sorted({a for a in answers if a is not None})
    random.Random(seed).shuffle(distinct)
    fold_of = {a: i % n_folds for i, a in enumerate(distinct)}
    return np.array([fold_of[a] if a is not None else -1 for a in answers], dtype=int)
