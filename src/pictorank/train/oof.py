"""Out-of-fold feature tables: the rows LightGBM learns from, each made by encoders and tables
that never saw it.

An encoder that was taught "sun; flower -> sunflower" gives that row a cosine no test row will
ever get, and LightGBM would learn to trust it. So train is split into folds grouped by answer;
each fold's features come from an encoder and tables fitted on the other folds, while val and
test get the encoder and tables fitted on all of train.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pictorank.artifacts import library_versions
from pictorank.encoder import Encoder, base_model_version, load_base_model, load_model_dir
from pictorank.features import FeatureExtractor
from pictorank.query import Query
from pictorank.train.config import Log, TrainConfig
from pictorank.train.finetune import FinetuneParams, finetune, weights_digest


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


def _finetune_key(queries: Sequence[Query], params: FinetuneParams) -> str:
    """Names a fine-tuning run by everything that determines its weights."""
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
        for encoder in extractor.encoders().values():
            encoder.flush()  # a retraining with the same fold encoder reads them back
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
    for encoder in extractor.encoders().values():
        encoder.flush()
    y_train, sizes_train = labels_and_sizes(train)
    y_val, sizes_val = labels_and_sizes(val)
    seconds = {"oof": oof_seconds, "final_features": time.perf_counter() - started - oof_seconds,
               "finetuned_encoders_reused_from_cache": oof_reused + int(final_reused)}
    return TrainingTables(X_train, y_train, sizes_train, folds, X_val, y_val, sizes_val, extractor, model, seconds)
