"""LambdaMART (LightGBM) on the out-of-fold table: parameters by grouped CV, trees by early stopping.

A small grid is compared by grouped k-fold CV on train; the simplest setting within one standard
error of the best wins, and the number of trees is chosen by early stopping on val. Seeds and
thread counts are fixed, so two runs give the same model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pictorank.train.config import Log, TrainConfig


def _ranker(params: dict[str, Any], config: TrainConfig, n_estimators: int):
    # lazy: lightgbm pulls in scikit-learn and scipy (~0.9 s), which the CLI's other commands never need
    import lightgbm as lgb

    return lgb.LGBMRanker(
        objective="lambdarank",
        metric="map",  # the only metric, so early stopping watches MRR (see _fit)
        n_estimators=n_estimators,
        random_state=config.seed,
        deterministic=True,
        force_row_wise=True,
        num_threads=config.num_threads,
        verbose=-1,
        subsample=1.0,
        colsample_bytree=0.8,
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
                _ranker(params, config, config.n_estimators),
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


def fit_booster(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray,
    X_val: pd.DataFrame, y_val: np.ndarray, sizes_val: np.ndarray,
    params: dict[str, Any], config: TrainConfig,
):
    """The final LambdaMART on all OOF train rows, its number of trees set by early stopping on val."""
    return _fit(_ranker(params, config, config.n_estimators), X, y, sizes, X_val, y_val, sizes_val, config)


def held_out_scores(
    X: pd.DataFrame, y: np.ndarray, sizes: np.ndarray, folds: np.ndarray,
    params: dict[str, Any], trees: int, config: TrainConfig,
) -> list[np.ndarray]:
    """Each training query's scores from a LambdaMART that never saw its fold (the CV folds of
    `cv_select`, grouped by answer), with the final model's parameters and number of trees.

    These are honest held-out scores for calibrating confidence: scores of the final booster
    on its own training rows would be overconfident. No early stopping here, since stopping on
    the held-out fold would tune to it.
    """
    query_fold = folds % config.cv_folds
    row_fold = np.repeat(query_fold, sizes)
    predictions = np.zeros(len(y))
    for k in range(config.cv_folds):
        fit_rows, held_rows = row_fold != k, row_fold == k
        model = _ranker(params, config, max(1, trees))
        model.fit(X[fit_rows], y[fit_rows], group=sizes[query_fold != k])
        predictions[held_rows] = model.predict(X[held_rows], num_threads=config.num_threads)
    bounds = np.cumsum([0, *sizes])
    return [predictions[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
