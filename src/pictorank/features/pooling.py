"""Learned position-weighted pooling of a clue's hint vectors (the ``*_cos_learned`` columns).

The cosine of an option to a weighted sum of unit hint vectors is read from the option x hint
cosines and the hints' Gram matrix, so no pooled vector is ever formed.
"""

from __future__ import annotations

import math
from itertools import product
from typing import Sequence

import numpy as np

from pictorank.encoders import Encoder
from pictorank.query import Query

MAX_POSITION_BUCKET = 4  # clues of 4 or more hints share one set of position weights
WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)

# One training clue as the weight search sees it: option x hint cosines, hint Gram matrix, answer index.
_Item = tuple[np.ndarray, np.ndarray, int]


def position_bucket(n_hints: int) -> int:
    return min(n_hints, MAX_POSITION_BUCKET)


def expand_weights(weights: Sequence[float], n_hints: int) -> np.ndarray:
    """Weights for `n_hints` positions; positions past the list reuse its last value."""
    return np.array([weights[min(i, len(weights) - 1)] for i in range(n_hints)], dtype=np.float64)


def learned_weights(position_weights: dict[int, list[float]], n_hints: int) -> np.ndarray:
    """The fitted weights for a clue of `n_hints` hints; equal weights for a length never seen."""
    return expand_weights(position_weights.get(position_bucket(n_hints), [1.0]), n_hints)


def pooled_cosines(hint_cos: np.ndarray, gram: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cosine of each option to the weighted sum of hint vectors, without forming the sum.

    With unit hint vectors h_i and option o: cos(o, sum w_i h_i) = (H w) / sqrt(w' G w).
    """
    norm = math.sqrt(max(float(w @ gram @ w), 1e-12))
    return hint_cos @ w / norm


def fit_position_weights(queries: Sequence[Query], encoder: Encoder, passes: int = 2) -> dict[int, list[float]]:
    """Per-position hint weights for each clue length, maximising MRR of pooled cosine on `queries`.

    Coordinate ascent over a small grid, started from equal weights: the first pictogram is the
    classifier and often generic ('animal'), so whether it deserves more or less weight is left
    to the data. A handful of numbers per clue length cannot memorise answers.
    """
    learned: dict[int, list[float]] = {}
    for bucket, items in sorted(_items_by_bucket(queries, encoder).items()):
        weights = _coordinate_ascent(items, bucket, passes)
        top = max(weights)
        learned[bucket] = [round(w / top, 4) for w in weights]
    return learned


def _items_by_bucket(queries: Sequence[Query], encoder: Encoder) -> dict[int, list[_Item]]:
    """The answered queries' cosines, grouped by clue length (all strings encoded in one batch)."""
    encoder.encode(list(dict.fromkeys(s for q in queries for s in (*q.hints, *q.options))))
    items: dict[int, list[_Item]] = {}
    for q in queries:
        if q.answer is None or q.answer not in q.options:
            continue
        hints = encoder.encode(list(q.hints))
        options = encoder.encode(list(q.options))
        items.setdefault(position_bucket(len(q.hints)), []).append(
            (options @ hints.T, hints @ hints.T, q.options.index(q.answer))
        )
    return items


def _coordinate_ascent(items: Sequence[_Item], bucket: int, passes: int) -> list[float]:
    """Try each grid value at each position in turn, keeping strict improvements of the MRR."""
    weights = [1.0] * bucket
    best = _mean_reciprocal_rank(items, weights)
    for _ in range(passes):
        for position, value in product(range(bucket), WEIGHT_GRID):
            trial = list(weights)
            trial[position] = value
            if sum(trial) == 0:
                continue
            score = _mean_reciprocal_rank(items, trial)
            if score > best + 1e-9:
                best, weights = score, trial
    return weights


def _mean_reciprocal_rank(items: Sequence[_Item], weights: Sequence[float]) -> float:
    total = 0.0
    for hint_cos, gram, answer in items:
        w = expand_weights(weights, hint_cos.shape[1])
        total += _reciprocal_rank(pooled_cosines(hint_cos, gram, w), answer)
    return total / len(items)


def _reciprocal_rank(scores: np.ndarray, answer: int) -> float:
    return 1.0 / (1 + int((scores > scores[answer]).sum()))
