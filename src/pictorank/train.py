"""How the learned ranker is trained: out-of-fold features, fine-tuning, CV, LambdaMART.

The one rule that shapes this module: anything fitted on train (the fine-tuned encoder, the
position weights, the association tables) must not have seen the rows the ranker learns from.
An encoder that was taught "sun; flower -> sunflower" gives that row a cosine no test row will
ever get, and LightGBM would learn to trust it. So train is split into folds grouped by answer;
each fold's features come from an encoder and tables fitted on the other folds (out-of-fold),
while val and test get the encoder and tables fitted on all of train.

LightGBM's LambdaMART (query groups = rows) then learns from the OOF table; a small grid of
parameters is compared by grouped k-fold CV on train and the number of trees is chosen by early
stopping on val. Seeds and thread counts are fixed, so two runs give the same model.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from pictorank.encoder import Encoder, load_base_model
from pictorank.features import FeatureExtractor, feature_names
from pictorank.finetune import FinetuneParams, finetune, weights_digest
from pictorank.ranker import Query

Log = Callable[[str], None]

DEFAULT_GRID: tuple[dict[str, Any], ...] = (
    {"num_leaves": 4, "min_child_samples": 50, "learning_rate": 0.05},
    {"num_leaves": 7, "min_child_samples": 20, "learning_rate": 0.05},
    {"num_leaves": 15, "min_child_samples": 50, "learning_rate": 0.05},
    {"num_leaves": 31, "min_child_samples": 50, "learning_rate": 0.05},
)


@dataclass(frozen=True)
class TrainConfig:
    """Every knob of a training run; stored in the model directory's metadata.

    folds : OOF folds (grouped by answer) for the features of the rows LightGBM learns from.
    finetune : False skips fine-tuning: the ``ft_*`` columns then repeat the base encoder.
    oof_epochs / final_epochs : fine-tuning epochs of each fold's encoder / of the final one.
        The fold encoders are shorter (they are thrown away) to keep training under 15 minutes.
    drop_groups : feature prefixes left out (ablations), e.g. ("ft_",) or ("lex_",).
    """

    folds: int = 3
    finetune: bool = True
    oof_epochs: float = 1.0
    final_epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 1e-4  # see FinetuneParams
    hard_negatives: int = 1
    seed: int = 13
    cv_folds: int = 3
    grid: tuple[dict[str, Any], ...] = DEFAULT_GRID
    n_estimators: int = 600
    early_stopping_rounds: int = 50
    num_threads: int = 2
    drop_groups: tuple[str, ...] = ()

    def finetune_params(self, epochs: float) -> FinetuneParams:
        return FinetuneParams(
            epochs=epochs,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            hard_negatives=self.hard_negatives,
            seed=self.seed,
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["grid"] = [dict(g) for g in self.grid]
        out["drop_groups"] = list(self.drop_groups)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        values = dict(values)
        values["grid"] = tuple(dict(g) for g in values.get("grid", DEFAULT_GRID))
        values["drop_groups"] = tuple(values.get("drop_groups", ()))
        return cls(**values)


def selected_features(drop_groups: Sequence[str]) -> list[str]:
    """The feature columns a model with these ablations uses, in the code's order."""
    return [n for n in feature_names() if not any(n.startswith(g) for g in drop_groups)]


def answer_folds(queries: Sequence[Query], n_folds: int, seed: int) -> np.ndarray:
    """A fold number per query; all queries with the same answer share a fold."""
    answers = sorted({q.answer for q in queries if q.answer is not None})
    random.Random(seed).shuffle(answers)
    fold_of = {a: i % n_folds for i, a in enumerate(answers)}
    return np.array([fold_of[q.answer] for q in queries])


def labels_and_sizes(queries: Sequence[Query]) -> tuple[np.ndarray, np.ndarray]:
    """LambdaMART targets (1 for the answer) and query group sizes, in transform's row order."""
    labels = np.concatenate([[float(o == q.answer) for o in q.options] for q in queries])
    return labels, np.array([len(q.options) for q in queries])


# -- encoders and features --------------------------------------------------------------------


def _finetune_key(queries: Sequence[Query], params: FinetuneParams) -> str:
    """Names a fine-tuning run by everything that determines its weights."""
    from pictorank.encoder import base_model_version
    from pictorank.versions import library_versions

    digest = hashlib.sha256()
    digest.update(json.dumps([asdict(params), base_model_version(), library_versions()], sort_keys=True).encode())
    for q in queries:
        digest.update(json.dumps([q.hints, q.options, q.answer]).encode())
    return digest.hexdigest()[:20]


def finetuned_encoder(
    queries: Sequence[Query], epochs: float, config: TrainConfig, cache_dir: Path | None, log: Log
) -> tuple[Any, Encoder, bool]:
    """A copy of the base model fine-tuned on `queries`, an Encoder named by its weights, and
    whether the weights came from the cache (then no fine-tuning time was spent).

    Fine-tuning is the slow part of training (minutes on a CPU) and is deterministic, so the
    weights are kept under `cache_dir/finetuned/<key>`, the key hashing data, parameters and
    library versions: retraining LightGBM or running the ablations reuses them.
    """
    from pictorank.encoder import load_model_dir

    params = config.finetune_params(epochs)
    stored = Path(cache_dir) / "finetuned" / _finetune_key(queries, params) if cache_dir is not None else None
    started = time.perf_counter()
    reused = stored is not None and (stored / "config.json").is_file()
    if reused:
        model = load_model_dir(stored)
        log(f"  fine-tuned encoder reused from {stored}")
    else:
        model = load_base_model()
        finetune(model, queries, params, log=log)
        if stored is not None:
            tmp = stored.with_name(stored.name + f".{os.getpid()}.tmp")
            model.save(str(tmp))
            os.replace(tmp, stored)
    digest = weights_digest(model)
    log(f"  fine-tuned {epochs:g} epoch(s) on {len(queries)} clues in {time.perf_counter() - started:.0f} s (weights {digest})")
    return model, Encoder(model=model, model_id=f"finetuned-{digest}", cache_dir=cache_dir), reused


def oof_features(
    queries: Sequence[Query], base_encoder: Encoder, config: TrainConfig, log: Log
) -> tuple[pd.DataFrame, np.ndarray, int]:
    """Feature table of train where every row's features come from models fitted without its fold,
    the folds, and how many fold encoders came from the fine-tuning cache."""
    folds = answer_folds(queries, config.folds, config.seed)
    reused_count = 0
    parts: list[pd.DataFrame | None] = [None] * len(queries)
    for k in range(config.folds):
        inside = [q for q, f in zip(queries, folds) if f != k]
        held = [i for i, f in enumerate(folds) if f == k]
        log(f"OOF fold {k + 1}/{config.folds}: fit on {len(inside)} clues, features for {len(held)}")
        ft = None
        if config.finetune:
            _, ft, reused = finetuned_encoder(inside, config.oof_epochs, config, base_encoder.cache_dir, log)
            reused_count += reused
        extractor = FeatureExtractor(base_encoder, ft).fit(inside)
        table = extractor.transform([queries[i] for i in held])
        sizes = np.cumsum([0] + [len(queries[i].options) for i in held])
        for j, i in enumerate(held):
            parts[i] = table.iloc[sizes[j] : sizes[j + 1]]
    return pd.concat(parts, ignore_index=True), folds, reused_count


def final_extractor(
    queries: Sequence[Query], base_encoder: Encoder, config: TrainConfig, log: Log
) -> tuple[FeatureExtractor, Any, bool]:
    """The extractor used for val and test (encoder and tables fitted on all of train), the
    fine-tuned model, and whether it came from the fine-tuning cache."""
    model = None
    ft = None
    reused = False
    if config.finetune:
        log(f"final fine-tune on all {len(queries)} train clues")
        model, ft, reused = finetuned_encoder(queries, config.final_epochs, config, base_encoder.cache_dir, log)
    return FeatureExtractor(base_encoder, ft).fit(queries), model, reused


# -- LightGBM ---------------------------------------------------------------------------------


def _ranker(params: dict[str, Any], config: TrainConfig, n_estimators: int):
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
    import lightgbm as lgb

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


# -- the whole procedure ----------------------------------------------------------------------


@dataclass
class TrainingTables:
    """What the expensive part of training produces; ablations reuse it with fewer columns."""

    X_train: pd.DataFrame
    y_train: np.ndarray
    sizes_train: np.ndarray
    folds: np.ndarray
    X_val: pd.DataFrame
    y_val: np.ndarray
    sizes_val: np.ndarray
    extractor: FeatureExtractor
    finetuned_model: Any
    seconds: dict[str, float] = field(default_factory=dict)


def build_tables(
    train: Sequence[Query], val: Sequence[Query], base_encoder: Encoder, config: TrainConfig, log: Log = print
) -> TrainingTables:
    """OOF features of train, final extractor, and features of val."""
    started = time.perf_counter()
    X_train, folds, oof_reused = oof_features(train, base_encoder, config, log)
    oof_seconds = time.perf_counter() - started
    extractor, model, final_reused = final_extractor(train, base_encoder, config, log)
    X_val = extractor.transform(val)
    y_train, sizes_train = labels_and_sizes(train)
    y_val, sizes_val = labels_and_sizes(val)
    seconds = {"oof": oof_seconds, "final_features": time.perf_counter() - started - oof_seconds,
               "finetuned_encoders_reused_from_cache": oof_reused + int(final_reused)}
    return TrainingTables(X_train, y_train, sizes_train, folds, X_val, y_val, sizes_val, extractor, model, seconds)


def fit_ranker_from_tables(tables: TrainingTables, config: TrainConfig, log: Log = print):
    """CV-select parameters, fit LambdaMART, and wrap everything in a LearnedRanker."""
    from pictorank.learned import LearnedRanker

    columns = selected_features(config.drop_groups)
    started = time.perf_counter()
    X, X_val = tables.X_train[columns], tables.X_val[columns]
    params, cv_results = cv_select(X, tables.y_train, tables.sizes_train, tables.folds, config, log)
    model = fit_booster(X, tables.y_train, tables.sizes_train, X_val, tables.y_val, tables.sizes_val, params, config)
    log(f"LambdaMART {params}: {model.best_iteration_} trees (early stopping on val)")
    ranker = LearnedRanker(encoder=tables.extractor.base_encoder, config=config)
    ranker.set_fitted(
        extractor=tables.extractor,
        booster=model.booster_,
        finetuned_model=tables.finetuned_model,
        training={"lgbm_params": params, "cv": cv_results, "trees": int(model.best_iteration_),
                  "lgbm_seconds": time.perf_counter() - started},
    )
    return ranker


def train_command(
    train_path: str | Path, val_path: str | Path, hints_path: str | Path, out_dir: str | Path,
    config: TrainConfig, encoder: Encoder, log: Log = print,
) -> dict[str, Any]:
    """`pictorank train`: load the files, train, evaluate on val, save the model directory."""
    from pictorank.data import load_hints, load_puzzles
    from pictorank.evaluate import evaluate_rankings
    from pictorank.ranker import to_queries
    from pictorank.versions import library_versions, sha256_file

    started = time.perf_counter()
    vocab = load_hints(hints_path)
    train_puzzles, val_puzzles = load_puzzles(train_path, vocab), load_puzzles(val_path, vocab)
    for path, puzzles in ((train_path, train_puzzles), (val_path, val_puzzles)):
        if any(p.answer is None for p in puzzles):
            from pictorank.data import DataError

            raise DataError(path, None, "answer", "training needs an answer in every row (train/val files)")
    train, val = to_queries(train_puzzles, vocab), to_queries(val_puzzles, vocab)
    tables = build_tables(train, val, encoder, config, log)
    ranker = fit_ranker_from_tables(tables, config, log)
    train_seconds = time.perf_counter() - started
    result = evaluate_rankings(val_puzzles, ranker.rank(val))
    metadata = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "versions": library_versions(),
        "training_files": {
            role: {"path": str(path), "sha256": sha256_file(path)}
            for role, path in (("train", train_path), ("val", val_path), ("hints", hints_path))
        },
        "config": config.to_dict(),
        "seeds": {"seed": config.seed, "torch": config.seed, "numpy": config.seed, "lightgbm": config.seed},
        "position_weights": {str(k): v for k, v in ranker.extractor_.position_weights_.items()},
        "val_metrics": {"overall": result["overall"], "by_subtask": result["by_subtask"]},
        "seconds": {**tables.seconds, "total_training": train_seconds},
        **ranker.training_,
    }
    ranker.save(out_dir, metadata=metadata)
    return metadata
