"""Fit src/pictorank/ranker/calibrations/none_of_these.json: the model of the chance that a
player's word is none of the options they typed (see pictorank.ranker.absence).

    PYTHONPATH=src python scripts/fit_none_of_these.py [--folds 5]

Bliss train only: each puzzle gives a row with its options as given (label 0) and one with its
answer removed (label 1). Before the fit on all of train it prints the cross-validated log loss
and AUC over folds grouped by answer word (a word never in both halves), the figures quoted in
docs/experiments/none-of-these.md. Val is not read here (bench/none_of_these.py scores it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import GroupKFold

from pictorank.encoders import Encoder
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker.absence import SHIPPED_FILE, AbsenceModel, absence_features, clue_similarities
from pictorank.settings import CommonSettings, use_offline_environment

DATA = Path(__file__).resolve().parents[1] / "data" / "bliss"


def training_rows(encoder: Encoder, queries: list[Query], answers: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features, labels (1: answer removed) and groups (the answer word) of every row."""
    removed = [Query(q.hints, tuple(o for o in q.options if o != a)) for q, a in zip(queries, answers)]
    kept_sims = clue_similarities(encoder, queries)
    removed_sims = clue_similarities(encoder, removed)
    features = [absence_features(s) for s in kept_sims] + [absence_features(s) for s in removed_sims]
    labels = [0] * len(queries) + [1] * len(removed)
    return np.array(features), np.array(labels), answers + answers


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    use_offline_environment()
    vocab = load_hints(DATA / "hint_descriptions.csv")
    puzzles = load_puzzles(DATA / "train.csv", vocab)
    queries = to_queries(puzzles, vocab)
    encoder = Encoder(cache_dir=CommonSettings().cache_dir)
    x, y, groups = training_rows(encoder, queries, [p.answer for p in puzzles])  # type: ignore[misc]
    predicted = np.zeros(len(y))
    for fit, held in GroupKFold(n_splits=args.folds).split(x, y, groups):
        predicted[held] = LogisticRegression(max_iter=1000).fit(x[fit], y[fit]).predict_proba(x[held])[:, 1]
    print(f"{args.folds}-fold CV by answer on train ({len(y)} rows): log loss {log_loss(y, predicted):.4f}, "
          f"AUC {roc_auc_score(y, predicted):.4f}, mean P(none) kept {predicted[y == 0].mean():.3f}, "
          f"removed {predicted[y == 1].mean():.3f}")
    model = LogisticRegression(max_iter=1000).fit(x, y)
    fitted = AbsenceModel(tuple(float(c) for c in model.coef_[0]), float(model.intercept_[0]),
                          f"base-encoder cosine similarities of the bundled Bliss train set ({len(puzzles)} clues, "
                          "each with its answer kept and removed)", len(y))
    SHIPPED_FILE.write_text(json.dumps(fitted.to_json(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED_FILE}: coef {[round(c, 3) for c in fitted.coef]}, intercept {fitted.intercept:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
