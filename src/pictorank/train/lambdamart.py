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

import functools
import math
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

import numpy as np
import pandas as pd

from pictorank.ranker.bag import BoosterBag
from pictorank.train.config import Log, TrainConfig

if TYPE_CHECKING:
    import lightgbm as lgb

Item = TypeVar("Item")


def column_share(config: TrainConfig, columns: int) -> float:
    """The share of the `columns` feature columns each tree may split on (`TrainConfig.colsample_bytree`)."""
    if config.colsample_bytree == "sqrt":
        return min(1.0, math.sqrt(columns) / columns) if columns else 1.0
    return float(config.colsample_bytree)  # a share in (0, 1], checked by TrainConfig


def lgbm_params(params: dict[str, Any], config: TrainConfig, columns: int, seed: int | None = None) -> dict[str, Any]:
    """LightGBM's parameters for one LambdaMART booster: `params` (a grid setting), the seed, and
    what every booster here shares. One thread a booster: `fit_side_by_side` runs
    `config.num_threads` of them at once, which is faster on small tables than one booster on
    all threads, and gives the same trees (deterministic, row-wise histograms)."""
    return {
        "objective": "lambdarank",
        "metric": "map",  # the only metric, so early stopping watches MRR (see cv_select)
        "seed": config.seed if seed is None else seed,
        "deterministic": True,
        "force_row_wise": True,
        "num_threads": 1,
        "verbose": -1,
        "bagging_fraction": 1.0,
        "feature_fraction": column_share(config, columns),
        **params,
    }


def _dataset(X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, params: dict[str, Any],
             reference: "lgb.Dataset | None" = None) -> "lgb.Dataset":
    """The binned table every booster of one setting learns from (binned once, not once a booster)."""
    import lightgbm as lgb  # lazy: lightgbm pulls in scikit-learn and scipy (slow), which the CLI's other commands never need

    return lgb.Dataset(X, y, group=sizes, params=params, reference=reference, free_raw_data=False).construct()


def fit_side_by_side(fits: Sequence[Callable[[], Item]], config: TrainConfig) -> list[Item]:
    """The results of `fits` (each one LightGBM booster, on one thread: `lgbm_params`), run
    `config.num_threads` at a time; in their order, whatever order they finish in."""
    if config.num_threads <= 1 or len(fits) <= 1:
        return [fit() for fit in fits]
    with ThreadPoolExecutor(max_workers=config.num_threads) as pool:  # LightGBM releases the GIL while it fits
        return list(pool.map(lambda fit: fit(), fits))


def cv_select(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, folds: np.ndarray, config: TrainConfig, log: Log
) -> tuple[dict[str, Any], int, list[dict[str, Any]]]:
    """Pick LightGBM parameters by grouped k-fold CV on the OOF train table (mean held-out MRR),
    and their number of trees: the median of the folds' early-stopping points (`chosen_trees`)."""
    import lightgbm as lgb  # lazy: see _dataset

    query_fold = folds % config.cv_folds
    row_fold = np.repeat(query_fold, sizes)

    def stopped(params: dict[str, Any], k: int) -> tuple[float, int]:
        """Fold k's held-out MRR at its best number of trees, and that number."""
        # MAP@30 with one relevant option per row is exactly MRR: smoother than Hits@1 to stop on.
        settings = {**lgbm_params(params, config, X.shape[1]), "eval_at": [30]}
        fit = _dataset(X[row_fold != k], y[row_fold != k], sizes[query_fold != k], settings)
        held = _dataset(X[row_fold == k], y[row_fold == k], sizes[query_fold == k], settings, reference=fit)
        booster = lgb.train(settings, fit, num_boost_round=config.n_estimators, valid_sets=[held],
                            callbacks=[lgb.early_stopping(config.early_stopping_rounds, first_metric_only=True,
                                                          verbose=False)])
        return booster.best_score["valid_0"]["map@30"], booster.best_iteration

    pairs = [(params, k) for params in config.grid for k in range(config.cv_folds)]
    outcomes = fit_side_by_side([functools.partial(stopped, *pair) for pair in pairs], config)
    results = []
    for i, params in enumerate(config.grid):
        scores, trees = zip(*(outcomes[i * config.cv_folds + k] for k in range(config.cv_folds)))
        results.append({
            "params": dict(params), "cv_mrr": float(np.mean(scores)),
            "cv_se": float(np.std(scores, ddof=1) / np.sqrt(len(scores))) if len(scores) > 1 else 0.0,
            "trees": [int(t) for t in trees],
        })
        log(f"  CV {params}: MRR {np.mean(scores):.4f} (trees {list(trees)})")
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
    import lightgbm as lgb  # lazy: see _dataset

    data = _dataset(X, y, sizes, lgbm_params(params, config, X.shape[1]))
    fitted = fit_side_by_side([functools.partial(lgb.train, lgbm_params(params, config, X.shape[1], seed), data,
                                                 num_boost_round=trees) for seed in bag_seeds(config)], config)
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
        bag = fit_bag(X[fit_rows], y[fit_rows], sizes[query_fold != k], params, max(1, trees), config)
        for booster in bag.boosters:
            predictions[held_rows] += booster.predict(X[held_rows], num_threads=config.num_threads) / len(bag.boosters)
    bounds = np.cumsum([0, *sizes])
    return [predictions[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
