"""The train-CV estimate of a recipe: how well it ranks train clues whose fold it never saw.

Every recipe choice is made on train folds (pictorank.train.lambdamart), so val is left as a
set of puzzles no choice saw, scored once at the end. The estimate below is what a variant is
judged by instead: the held-out scores of the CV bags (`held_out_scores`), ranked as the saved
model ranks (with the blend towards cosine, pictorank.ranker.fallback), summarised per CV fold
as mean and standard error over the folds. Only the train clues as they are count; the
unfamiliar rows (pictorank.train.oof.unfamiliar_features) are drawn up for learning, not puzzles.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pictorank.evaluation.metrics import METRICS
from pictorank.ranker.fallback import COSINE_COLUMN, KNOWN_COLUMN, blend_rows

ESTIMATE_METRICS = ("hits@1", "score", "mrr")


def answer_ranks(scores: Sequence[np.ndarray], labels: Sequence[np.ndarray]) -> list[int]:
    """The answer's 0-based place in each row ranked by `scores` (ties keep the option order,
    as Ranker.rank does)."""
    ranks = []
    for row, row_labels in zip(scores, labels):
        order = np.argsort(-np.asarray(row, dtype=float), kind="stable")
        ranks.append(int(np.flatnonzero(np.asarray(row_labels)[order] == 1)[0]))
    return ranks


def blended(scores: Sequence[np.ndarray], table: Any) -> list[np.ndarray]:
    """`scores` as the saved model turns them into its ranking: blended towards cosine by the
    share of unknown descriptions (`table` holds the rows' cosine and familiarity columns)."""
    return blend_rows(list(scores), table[COSINE_COLUMN].to_numpy(), table[KNOWN_COLUMN].to_numpy())


def cv_estimate(ranks: Sequence[int], query_folds: np.ndarray, counted: np.ndarray) -> dict[str, Any]:
    """Mean and standard error over the CV folds of each of ESTIMATE_METRICS, over the `counted`
    rows (a boolean per query), with each fold's own figures."""
    ranks_array = np.asarray(ranks)
    per_fold: list[dict[str, float]] = []
    for k in sorted(set(np.asarray(query_folds)[counted].tolist())):
        rows = ranks_array[(query_folds == k) & counted]
        per_fold.append({m: float(np.mean([METRICS[m](int(r)) for r in rows])) for m in ESTIMATE_METRICS}
                        | {"rows": int(len(rows))})
    summary: dict[str, Any] = {"folds": len(per_fold), "rows": int(np.sum(counted)), "per_fold": per_fold}
    for metric in ESTIMATE_METRICS:
        values = [f[metric] for f in per_fold]
        summary[metric] = float(np.mean(values)) if values else float("nan")
        summary[f"{metric}_se"] = float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0
    return summary


def format_estimate(estimate: dict[str, Any]) -> str:
    """One line: each metric's mean ± standard error over the folds."""
    parts = [f"{m} {estimate[m]:.4f} ± {estimate[f'{m}_se']:.4f}" for m in ESTIMATE_METRICS]
    return f"train-CV ({estimate['folds']} folds by answer, {estimate['rows']} clues): " + ", ".join(parts)
