"""LambdaMART (LightGBM) on the out-of-fold table: parameters by grouped CV, trees by early stopping.

A small grid is compared by grouped k-fold CV on train; the simplest setting within one standard
error of the best wins. With that setting a bag of boosters is fitted, one per seed, each tree
on a random few of the columns and each booster's number of trees chosen by early stopping on val;
the shipped booster is one distilled from the bag's mean score (`distil`). Seeds and thread counts
are fixed, so two runs give the same model.

Why a bag, and why distil it (issue 10): one booster whose trees each see a random subset of the
columns still leans on whichever columns its seed favoured, and on a vocabulary it never saw that
choice decides a few first places either way. The mean of several such boosters spreads the
weight over every group of columns (base encoder, fine-tuned encoder, association tables), so a
shift in one group - the fine-tuned encoder misreading names - moves the ranking less, and the
model no longer depends on one seed's luck. But ten boosters cost ten times the trees at every
prediction, and batch ranking spends its time there; a single booster fitted to the bag's mean
scores ranks like the bag (correlation 0.998 on unseen vocabularies) at the cost of one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from pictorank.errors import UsageError
from pictorank.train.config import Log, TrainConfig

if TYPE_CHECKING:
    import lightgbm as lgb


def column_share(config: TrainConfig, columns: int) -> float:
    """The share of the `columns` feature columns each tree may split on (`TrainConfig.colsample_bytree`)."""
    if config.colsample_bytree == "sqrt":
        return min(1.0, math.sqrt(columns) / columns) if columns else 1.0
    if isinstance(config.colsample_bytree, str) or not 0.0 < config.colsample_bytree <= 1.0:
        raise UsageError(f"colsample_bytree must be 'sqrt' or a share in (0, 1], found {config.colsample_bytree!r}")
    return float(config.colsample_bytree)


def _ranker(params: dict[str, Any], config: TrainConfig, n_estimators: int, columns: int, seed: int | None = None):
    # lazy: lightgbm pulls in scikit-learn and scipy (~0.9 s), which the CLI's other commands never need
    import lightgbm as lgb

    return lgb.LGBMRanker(
        objective="lambdarank",
        metric="map",  # the only metric, so early stopping watches MRR (see _fit)
        n_estimators=n_estimators,
        random_state=config.seed if seed is None else seed,
        deterministic=True,
        force_row_wise=True,
        num_threads=config.num_threads,
        verbose=-1,
        subsample=1.0,
        colsample_bytree=column_share(config, columns),
        **params,
    )


def _fit(model, X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, X_eval, y_eval, sizes_eval, config: TrainConfig):
    import lightgbm as lgb  # lazy: see _ranker

    # MAP@30 with one relevant option per row is exactly MRR: smoother than Hits@1 to stop on.
    model.fit(
        X, y, group=sizes,
        eval_X=(X_eval,), eval_y=(y_eval,), eval_group=[sizes_eval], eval_at=[30],
        callbacks=[lgb.early_stopping(config.early_stopping_rounds, first_metric_only=True, verbose=False)],
    )
    return model


def cv_select(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, folds: np.ndarray, config: TrainConfig, log: Log
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Pick LightGBM parameters by grouped k-fold CV on the OOF train table (mean held-out MRR)."""
    row_fold = np.repeat(folds % config.cv_folds, sizes)
    results = []
    for params in config.grid:
        scores, trees = [], []
        for k in range(config.cv_folds):
            fit_rows, eval_rows = row_fold != k, row_fold == k
            model = _fit(
                _ranker(params, config, config.n_estimators, X.shape[1]),
                X[fit_rows], y[fit_rows], sizes[folds % config.cv_folds != k],
                X[eval_rows], y[eval_rows], sizes[folds % config.cv_folds == k], config,
            )
            scores.append(next(iter(model.best_score_.values()))["map@30"])
            trees.append(model.best_iteration_)
        results.append({
            "params": dict(params), "cv_mrr": float(np.mean(scores)),
            "cv_se": float(np.std(scores, ddof=1) / np.sqrt(len(scores))) if len(scores) > 1 else 0.0,
            "trees": [int(t) for t in trees],
        })
        log(f"  CV {params}: MRR {np.mean(scores):.4f} (trees {trees})")
    # One-standard-error rule: the grid goes from simple to complex, and the simplest setting
    # within one standard error of the best CV score is taken (differences below that are noise).
    best = max(results, key=lambda r: r["cv_mrr"])
    chosen = next(r for r in results if r["cv_mrr"] >= best["cv_mrr"] - best["cv_se"])
    return chosen["params"], results


def bag_seeds(config: TrainConfig) -> list[int]:
    """The seeds of the bag's boosters: `seed`, `seed` + 1, ... (`TrainConfig.bag` of them)."""
    if config.bag < 1:
        raise UsageError(f"bag must be at least 1 booster, found {config.bag}")
    return [config.seed + i for i in range(config.bag)]


def fit_bag(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray,
    X_val: pd.DataFrame, y_val: np.ndarray, sizes_val: np.ndarray,
    params: dict[str, Any], config: TrainConfig,
) -> tuple[list["lgb.Booster"], list[int]]:
    """The LambdaMART bag on all OOF train rows (one booster per seed of `bag_seeds`), and each
    booster's number of trees, set by early stopping on val."""
    fitted = [_fit(_ranker(params, config, config.n_estimators, X.shape[1], seed), X, y, sizes,
                   X_val, y_val, sizes_val, config) for seed in bag_seeds(config)]
    return [m.booster_ for m in fitted], [int(m.best_iteration_) for m in fitted]


def bag_scores(bag: Sequence["lgb.Booster"], X: pd.DataFrame, num_threads: int) -> np.ndarray:
    """The bag's score of each row: the mean of its boosters' scores."""
    return np.mean([booster.predict(X, num_threads=num_threads) for booster in bag], axis=0)


def distil(
    bag: Sequence["lgb.Booster"], X: pd.DataFrame, X_val: pd.DataFrame, params: dict[str, Any], config: TrainConfig,
) -> "lgb.Booster":
    """One booster that scores like the bag: least squares on the bag's mean score of every OOF
    train row, with the bag's leaves, every column, at most `student_trees` trees (one booster's
    prediction cost) at `student_learning_rate`, stopped early on how closely it follows the
    bag on val. It learns the bag's scores, not the labels: where the bag spreads its weight over
    every group of columns, so does it."""
    import lightgbm as lgb  # lazy: see _ranker

    student = lgb.LGBMRegressor(
        objective="regression",
        n_estimators=config.student_trees,
        learning_rate=config.student_learning_rate,
        num_leaves=params["num_leaves"],
        min_child_samples=params["min_child_samples"],
        random_state=config.seed,
        deterministic=True,
        force_row_wise=True,
        num_threads=config.num_threads,
        verbose=-1,
    )
    student.fit(
        X, bag_scores(bag, X, config.num_threads),
        eval_X=(X_val,), eval_y=(bag_scores(bag, X_val, config.num_threads),),
        callbacks=[lgb.early_stopping(config.early_stopping_rounds, verbose=False)],
    )
    return student.booster_


def held_out_scores(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, folds: np.ndarray,
    params: dict[str, Any], trees: Sequence[int], config: TrainConfig,
) -> list[np.ndarray]:
    """Each training query's scores from a LambdaMART bag that never saw its fold (the CV folds of
    `cv_select`, grouped by answer), with the final bag's parameters, seeds and numbers of trees.

    These are honest held-out scores for calibrating confidence: scores of the final booster
    on its own training rows would be overconfident. No early stopping here, since stopping on
    the held-out fold would tune to it.
    """
    query_fold = folds % config.cv_folds
    row_fold = np.repeat(query_fold, sizes)
    predictions = np.zeros(len(y))
    for k in range(config.cv_folds):
        fit_rows, held_rows = row_fold != k, row_fold == k
        for seed, count in zip(bag_seeds(config), trees, strict=True):
            model = _ranker(params, config, max(1, count), X.shape[1], seed)
            model.fit(X[fit_rows], y[fit_rows], group=sizes[query_fold != k])
            predictions[held_rows] += model.predict(X[held_rows], num_threads=config.num_threads) / len(trees)
    bounds = np.cumsum([0, *sizes])
    return [predictions[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
