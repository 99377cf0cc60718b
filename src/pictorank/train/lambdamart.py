"""LambdaMART (LightGBM) on the out-of-fold table: every choice by grouped CV on train, none on val.

A small grid is compared by grouped k-fold CV on train (folds by answer, each fold's boosters
stopping early on that fold); the simplest setting within one standard error of the best wins,
and its number of trees is the median of its folds' early-stopping points. The final model is a
bag of boosters with that setting and that many trees, one per seed (pictorank.ranker.bag),
fitted on all of train. Val plays no part: it can only be scored once the model is made, so its
figures stay an estimate of puzzles no choice saw. Seeds and thread counts are fixed, so two runs
give the same model.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pictorank.ranker.bag import BoosterBag
from pictorank.train.config import Log, TrainConfig


def column_share(config: TrainConfig, columns: int) -> float:
    """The share of the `columns` feature columns each tree may split on (`TrainConfig.colsample_bytree`)."""
    if config.colsample_bytree == "sqrt":
        return min(1.0, math.sqrt(columns) / columns) if columns else 1.0
    return float(config.colsample_bytree)  # a share in (0, 1], checked by TrainConfig


def _ranker(params: dict[str, Any], config: TrainConfig, n_estimators: int, columns: int, seed: int | None = None):
    # lazy: lightgbm pulls in scikit-learn and scipy (slow), which the CLI's other commands never need
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
) -> tuple[dict[str, Any], int, list[dict[str, Any]]]:
    """Pick LightGBM parameters by grouped k-fold CV on the OOF train table (mean held-out MRR),
    and their number of trees: the median of the folds' early-stopping points (`chosen_trees`)."""
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
    return chosen["params"], chosen_trees(chosen["trees"]), results


def chosen_trees(stopping_points: Sequence[int]) -> int:
    """The final boosters' number of trees: the median of the CV folds' early-stopping points
    (rounded; at least one). Each fold stopped where its held-out answers were ranked best; the
    median is the typical point, and one fold's early or late stop does not move it."""
    return max(1, int(round(float(np.median(stopping_points)))))


def bag_seeds(config: TrainConfig) -> list[int]:
    """The seeds of the bag's boosters: `seed`, `seed` + 1, ... (`TrainConfig.bag` of them)."""
    return [config.seed + i for i in range(config.bag)]


def fit_bag(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, params: dict[str, Any], trees: int, config: TrainConfig,
) -> BoosterBag:
    """The final LambdaMART bag on all OOF train rows: one booster per seed of `bag_seeds`, each
    with the `trees` the CV chose (no early stopping: there is no held-out set left to stop on)."""
    fitted = []
    for seed in bag_seeds(config):
        model = _ranker(params, config, trees, X.shape[1], seed)
        fitted.append(model.fit(X, y, group=sizes).booster_)
    return BoosterBag(fitted)


def held_out_scores(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, folds: np.ndarray,
    params: dict[str, Any], trees: int, config: TrainConfig,
) -> list[np.ndarray]:
    """Each training query's scores from a LambdaMART bag that never saw its fold (the CV folds of
    `cv_select`, grouped by answer), with the final bag's parameters, seeds and number of trees.

    These are honest held-out scores, for calibrating confidence and for the train-CV estimate of
    the recipe (pictorank.train.pipeline): scores of the final booster on its own training rows
    would be overconfident. No early stopping here, since stopping on the held-out fold would
    tune to it.
    """
    query_fold = folds % config.cv_folds
    row_fold = np.repeat(query_fold, sizes)
    predictions = np.zeros(len(y))
    for k in range(config.cv_folds):
        fit_rows, held_rows = row_fold != k, row_fold == k
        seeds = bag_seeds(config)
        for seed in seeds:
            model = _ranker(params, config, max(1, trees), X.shape[1], seed)
            model.fit(X[fit_rows], y[fit_rows], group=sizes[query_fold != k])
            predictions[held_rows] += model.predict(X[held_rows], num_threads=config.num_threads) / len(seeds)
    bounds = np.cumsum([0, *sizes])
    return [predictions[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
