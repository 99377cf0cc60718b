"""How the learned ranker is trained, end to end: out-of-fold features (`oof`), fine-tuning
(`finetune`), CV and LambdaMART (`lambdamart`), then the model directory.

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

import time
from pathlib import Path
from typing import Any, Sequence

from pictorank.artifacts import check_replaceable, library_versions, sha256_file
from pictorank.encoder import Encoder
from pictorank.errors import DataError
from pictorank.evaluation import evaluate_rankings
from pictorank.features import selected_features
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import LearnedRanker
from pictorank.train.config import Log, TrainConfig
from pictorank.train.lambdamart import cv_select, fit_booster
from pictorank.train.oof import TrainingTables, build_tables


def fit_ranker_from_tables(tables: TrainingTables, config: TrainConfig, log: Log = print) -> LearnedRanker:
    """CV-select parameters, fit LambdaMART on the OOF table, and wrap it all in a LearnedRanker."""
    columns = selected_features(config.drop_groups)
    started = time.perf_counter()
    X, X_val = tables.X_train[columns], tables.X_val[columns]
    params, cv_results = cv_select(X, tables.y_train, tables.sizes_train, tables.folds, config, log)
    model = fit_booster(X, tables.y_train, tables.sizes_train, X_val, tables.y_val, tables.sizes_val, params, config)
    log(f"LambdaMART {params}: {model.best_iteration_} trees (early stopping on val)")
    training = {"lgbm_params": params, "cv": cv_results, "trees": int(model.best_iteration_),
                "lgbm_seconds": time.perf_counter() - started}
    return LearnedRanker(tables.extractor, model.booster_, columns, tables.finetuned_model, config.num_threads, training)


def fit_learned_ranker(
    train: Sequence[Query], val: Sequence[Query], encoder: Encoder, config: TrainConfig, log: Log = print
) -> tuple[LearnedRanker, TrainingTables]:
    """The whole training procedure on queries with answers: OOF tables, then LambdaMART.

    `val` only stops LightGBM early; `pictorank train` and the benches both come through here.
    """
    tables = build_tables(train, val, encoder, config, log)
    return fit_ranker_from_tables(tables, config, log), tables


def train_command(
    train_path: str | Path, val_path: str | Path, hints_path: str | Path, out_dir: str | Path,
    config: TrainConfig, encoder: Encoder, log: Log = print, force: bool = False,
) -> dict[str, Any]:
    """`pictorank train`: load the files, train, evaluate on val, save the model directory.

    The destination is checked first (`check_replaceable`): minutes of training must not end in
    a refusal to write.
    """
    check_replaceable(out_dir, force)
    started = time.perf_counter()
    vocab = load_hints(hints_path)
    train_puzzles, val_puzzles = load_puzzles(train_path, vocab), load_puzzles(val_path, vocab)
    for path, puzzles in ((train_path, train_puzzles), (val_path, val_puzzles)):
        if any(p.answer is None for p in puzzles):
            raise DataError(path, None, "answer", "training needs an answer in every row (train/val files)")
    train, val = to_queries(train_puzzles, vocab), to_queries(val_puzzles, vocab)
    ranker, tables = fit_learned_ranker(train, val, encoder, config, log)
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
        "position_weights": {str(k): v for k, v in ranker.extractor.position_weights_.items()},
        "val_metrics": {"overall": result["overall"], "by_subtask": result["by_subtask"]},
        "seconds": {**tables.seconds, "total_training": train_seconds},
    }
    ranker.save(out_dir, metadata=metadata, force=force)
    return {**ranker.training, **metadata}
