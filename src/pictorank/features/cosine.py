"""The ``base_*`` / ``ft_*`` columns: cosine similarities of each option to the clue, from one
encoder (the base or the fine-tuned one; the prefix names its space).

Four poolings of the clue (its joined text, the mean and the learned position-weighted sum of
its hint vectors, the task's seed template), per-hint statistics, and each pooling's rank, gap
to the row's best and z-score within the row.
"""

from __future__ import annotations

import numpy as np

from pictorank.encoders import Encoder
from pictorank.features.pooling import learned_weights, pooled_cosines
from pictorank.query import Query, joined_text, seed_text

SCORE_COLUMNS = ("joined", "mean", "learned", "seed")  # poolings that get rank/gap columns
HINT_STATS = ("first", "last", "max", "min", "mean", "spread")
ROW_STATS = ("rank", "gap", "z")


def names(space: str) -> list[str]:
    """The columns `columns(space, ...)` makes, in order."""
    return [
        *(f"{space}_cos_{s}" for s in SCORE_COLUMNS),
        *(f"{space}_hint_{s}" for s in HINT_STATS),
        *(f"{space}_{kind}_{s}" for s in SCORE_COLUMNS for kind in ROW_STATS),
    ]


def seed_names(space: str) -> list[str]:
    """The columns read from the seed template's embedding: the costliest string of a clue (far
    more tokens than the joined text), which a model without them never encodes."""
    return [f"{space}_cos_seed", *(f"{space}_{kind}_seed" for kind in ROW_STATS)]


def columns(space: str, encoder: Encoder, q: Query, position_weights: dict[int, list[float]],
            with_seed: bool = True) -> dict[str, np.ndarray]:
    """The cosine columns of `q`'s options computed with `encoder`, named ``<space>_*``.

    Without `with_seed` the seed template is not encoded and its columns (`seed_names`) are zeros.
    """
    options = encoder.encode(list(q.options))
    hints = encoder.encode(list(q.hints))
    hint_cos = options @ hints.T  # options x hints
    scores = _pooled_scores(encoder, q, options, hints, hint_cos, position_weights, with_seed)
    cols = {f"{space}_cos_{name}": s for name, s in scores.items()}
    cols.update({f"{space}_hint_{name}": values for name, values in _hint_stats(hint_cos).items()})
    for name in SCORE_COLUMNS:
        cols.update({f"{space}_{kind}_{name}": values for kind, values in _row_stats(scores[name]).items()})
    return cols


def _pooled_scores(
    encoder: Encoder, q: Query, options: np.ndarray, hints: np.ndarray, hint_cos: np.ndarray,
    position_weights: dict[int, list[float]], with_seed: bool = True,
) -> dict[str, np.ndarray]:
    """Each option's cosine to the clue under every pooling of SCORE_COLUMNS (seed: zeros without `with_seed`)."""
    gram = hints @ hints.T
    return {
        "joined": options @ encoder.encode([joined_text(q.hints)])[0],
        "mean": pooled_cosines(hint_cos, gram, np.ones(len(q.hints))),
        "learned": pooled_cosines(hint_cos, gram, learned_weights(position_weights, len(q.hints))),
        "seed": options @ encoder.encode([seed_text(q.hints)])[0] if with_seed else np.zeros(len(q.options)),
    }


def _hint_stats(hint_cos: np.ndarray) -> dict[str, np.ndarray]:
    """Per-hint cosines summarised per option (the first hint is Bliss's classifier)."""
    return {
        "first": hint_cos[:, 0],
        "last": hint_cos[:, -1],
        "max": hint_cos.max(axis=1),
        "min": hint_cos.min(axis=1),
        "mean": hint_cos.mean(axis=1),
        "spread": hint_cos.max(axis=1) - hint_cos.min(axis=1),
    }


def _row_stats(s: np.ndarray) -> dict[str, np.ndarray]:
    """A score relative to the row's other options: rank (0 = best), gap to the best, z-score."""
    return {
        "rank": np.argsort(np.argsort(-s, kind="stable"), kind="stable").astype(np.float64),
        "gap": s - s.max(),
        "z": (s - s.mean()) / (s.std() + 1e-6),
    }
