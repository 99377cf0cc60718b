"""Fitting the confidence calibration (pictorank.ranker.calibration) from rankings whose outcome
is known and that the ranker did not learn from.

- learned ranker: the out-of-fold CV scores of the training rows (`held_out_scores`), fitted in
  `pictorank.train.pipeline` and saved in the model directory;
- `seed` / `cosine`: their rankings of the bundled train set (they learn nothing from it), fitted
  by `bench/calibration.py --write-shipped` into `pictorank/ranker/calibrations/<method>.json`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pictorank.query import Query
from pictorank.ranker import Ranker
from pictorank.ranker.calibration import Calibrator, ranking_features


def answer_labels(queries: Sequence[Query]) -> list[np.ndarray]:
    """1 for each query's answer among its options, 0 for the others."""
    return [np.array([float(o == q.answer) for o in q.options]) for q in queries]


def first_is_right(scores: Sequence[np.ndarray], labels: Sequence[np.ndarray]) -> tuple[list[list[float]], list[bool]]:
    """Each query's scores sorted best first, and whether its best-scored option is the answer
    (label 1; ties keep the option order, as in Ranker.rank)."""
    sorted_scores, correct = [], []
    for row, row_labels in zip(scores, labels):
        order = np.argsort(-np.asarray(row), kind="stable")
        sorted_scores.append([float(row[i]) for i in order])
        correct.append(bool(row_labels[order[0]] == 1))
    return sorted_scores, correct


def fit_calibrator(sorted_scores: Sequence[Sequence[float]], correct: Sequence[bool], fitted_on: str) -> Calibrator:
    """A Platt (logistic) calibrator over `ranking_features`; almost no regularisation, since
    three coefficients cannot overfit a few thousand rankings."""
    from sklearn.linear_model import LogisticRegression  # lazy: scikit-learn is slow to import

    X = np.array([ranking_features(s) for s in sorted_scores])
    y = np.array(correct, dtype=int)
    if len(set(y.tolist())) < 2:
        raise ValueError("calibration needs rankings with right and wrong first options")
    model = LogisticRegression(C=1e4, max_iter=1000).fit(X, y)
    coef = tuple(float(c) for c in model.coef_[0])
    return Calibrator(coef, float(model.intercept_[0]), fitted_on, len(y), float(y.mean()))  # type: ignore[arg-type]


def unlearned_calibrator(ranker: Ranker, queries: Sequence[Query], fitted_on: str) -> Calibrator:
    """The calibration of a ranker that learned nothing, from its rankings of answered `queries`."""
    sorted_scores, correct = first_is_right(ranker.score(queries), answer_labels(queries))
    return fit_calibrator(sorted_scores, correct, fitted_on)
