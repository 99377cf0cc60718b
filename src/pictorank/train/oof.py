"""Out-of-fold feature tables: the rows LightGBM learns from, each made by encoders and tables
that never saw it.

An encoder that was taught "sun; flower -> sunflower" gives that row a cosine no test row will
ever get, and LightGBM would learn to trust it. So train is split into folds grouped by answer;
each fold's features come from an encoder and tables fitted on the other folds, while val and
test get the encoder and tables fitted on all of train (the final extractor; nothing here reads val).

Those rows all look like home: every description was used by other train clues, every answer
has near kin among the fitted folds' answers. A second set of rows (`unfamiliar_features`)
shows the ranker what a clue from another vocabulary looks like, built the same out-of-fold way
but with whole kinds of answers and a share of the descriptions held out; the ``fam_*`` columns
(pictorank.features.familiarity) let it tell the two apart.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from pictorank.encoders import Encoder
from pictorank.errors import UsageError
from pictorank.features import FeatureExtractor, feature_names
from pictorank.query import Query
from pictorank.train.config import MIN_ANSWERS, Log, TrainConfig
from pictorank.train.fold_encoders import (Exported, answer_kinds, finetune_ahead, finetuned_encoder, kind_splits,
                                           oof_split, query_folds)
from pictorank.encoders.runtime import served_encoder


def labels_and_sizes(queries: Sequence[Query]) -> tuple[np.ndarray, np.ndarray]:
    """LambdaMART targets (1 for the answer) and query group sizes, in transform's row order."""
    labels = np.array([float(o == q.answer) for q in queries for o in q.options])
    return labels, np.array([len(q.options) for q in queries], dtype=int)


def fold_extractor(inside: Sequence[Query], base_encoder: Encoder, config: TrainConfig,
                   log: Log) -> tuple[FeatureExtractor, Encoder | None, bool]:
    """The extractor of a fold: fitted on the clues `inside` it, over the fold encoder fine-tuned
    on them (None without fine-tuning); and whether that encoder came from the fine-tuning cache.
    Every stage that scores held-out clues (the ranker's tables, the unfamiliar rows, open play's
    rows) takes its fold encoders here, so a fold's encoder is fine-tuned once per run at most."""
    ft, reused = None, False
    if config.finetune:
        _, ft, reused = finetuned_encoder(inside, config.oof_epochs, config, base_encoder.cache_dir, log)
    return FeatureExtractor(base_encoder, ft).fit(inside), ft, reused


def oof_features(
    queries: Sequence[Query], base_encoder: Encoder, config: TrainConfig, log: Log
) -> tuple[pd.DataFrame, np.ndarray, int]:
    """Feature table of train where every row's features come from models fitted without its fold,
    the folds, and how many fold encoders came from the fine-tuning cache."""
    folds = query_folds(queries, config.folds, config.seed)
    reused_count = 0
    parts: list[pd.DataFrame | None] = [None] * len(queries)
    for k in range(config.folds):
        inside, held = oof_split(queries, folds, k)
        log(f"OOF fold {k + 1}/{config.folds}: fit on {len(inside)} clues, features for {len(held)}")
        extractor, _, reused = fold_extractor(inside, base_encoder, config, log)
        reused_count += reused
        table = extractor.transform([queries[i] for i in held])
        for encoder in extractor.encoders().values():
            encoder.flush()  # a retraining with the same fold encoder reads them back
        sizes = np.cumsum([0] + [len(queries[i].options) for i in held])
        for j, i in enumerate(held):
            parts[i] = table.iloc[sizes[j] : sizes[j + 1]]
    return pd.concat(parts, ignore_index=True), folds, reused_count


def as_served(encoder: Encoder, config: TrainConfig) -> Encoder:
    """The base encoder as the saved model runs it (its export, when training quantizes:
    encoders.runtime.served_encoder), so that training rows are computed as a served request's are."""
    if config.quantization is None:
        return encoder
    return served_encoder(encoder.model, encoder.model_id, "base", config.quantization, encoder.cache_dir)


def _with_options_from(query: Query, pool: Sequence[str], rng: random.Random) -> Query:
    """`query` with its wrong options replaced by other answers drawn from `pool` (as many as
    the pool allows), the answer kept at its place."""
    wrong = rng.sample([a for a in pool if a != query.answer], min(len(query.options) - 1, len(pool) - 1))
    at = query.options.index(query.answer)
    return Query(query.hints, tuple(wrong[:at] + [query.answer] + wrong[at:]), query.answer)


def unfamiliar_features(
    queries: Sequence[Query], folds: np.ndarray, base_encoder: Encoder, config: TrainConfig, log: Log,
    kinds_encoder: Encoder | None = None,
) -> tuple[pd.DataFrame, list[Query], np.ndarray, int]:
    """Train clues built as they look far from home: the rows that teach the ranker what an
    unseen vocabulary looks like (the ``fam_*`` columns tell it which rows these are).

    The answers are clustered into kinds and the kinds dealt into `config.unfamiliar_groups`
    groups. For each group, an encoder and tables are fitted on the clues of the other groups
    only, and forget a seeded share (`config.hidden_descriptions`) of their descriptions; the
    group's clues are then scored with them, their wrong options redrawn from the group's own
    answers. So, as for another vocabulary at prediction time, neither the clue's answer nor
    any of its options is of a kind the encoder was fine-tuned on, and some or all of the
    clue's descriptions are unknown to the tables. (Keeping the original options would not do:
    they are mostly answers of the fitted kinds, so "unfamiliar" would mean "right".)

    Returns the feature table, the queries it was built from (their options redrawn), each
    query's CV fold (that of its original, so CV keeps an answer's rows together) and how many
    fine-tuned encoders came from the cache. Groups too small to redraw options are skipped.

    `kinds_encoder` (default `base_encoder`) embeds the answers for the clustering: the exact
    PyTorch encoder when the features go through an int8 export, whose vectors move a little with
    the batch they were encoded in. k-means follows such noise: three trainings on int8 vectors
    gave three different splits and three different val Hits@1 (docs/experiments/transfer.md).
    """
    kinds = answer_kinds(queries, kinds_encoder or base_encoder, config.answer_kinds, config.seed)
    groups = config.unfamiliar_groups
    rng = random.Random(config.seed)
    tables, built, built_folds, reused_count = [], [], [], 0
    for g, inside, held in kind_splits(queries, kinds, groups):
        pool = sorted({queries[i].answer for i in held})
        if not inside:
            log(f"unfamiliar group {g + 1}/{groups}: skipped ({len(pool)} answers held out: too few to redraw options "
                f"from, or no clue of another kind to fit on)")
            continue
        rows = [_with_options_from(queries[i], pool, rng) for i in held]
        log(f"unfamiliar group {g + 1}/{groups}: fit on {len(inside)} clues of other answer kinds, features for {len(held)}")
        extractor, _, reused = fold_extractor(inside, base_encoder, config, log)
        reused_count += reused
        descriptions = sorted({h for q in inside for h in q.hints})
        hidden = random.Random(config.seed + g).sample(descriptions, int(len(descriptions) * config.hidden_descriptions))
        tables.append(extractor.forgetting(hidden).transform(rows))
        for encoder in extractor.encoders().values():
            encoder.flush()
        built += rows
        built_folds += [int(folds[i]) for i in held]
    if not tables:
        return pd.DataFrame(np.zeros((0, len(feature_names())), np.float32), columns=feature_names()), [], np.zeros(0, int), 0
    table = pd.concat(tables, ignore_index=True)
    return table, built, np.array(built_folds, dtype=int), reused_count


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
    """What the expensive part of training produces, from train alone; ablations reuse it with
    fewer columns."""

    X_train: pd.DataFrame
    y_train: np.ndarray
    sizes_train: np.ndarray
    folds: np.ndarray
    extractor: FeatureExtractor
    finetuned_model: Any
    seconds: dict[str, float] = field(default_factory=dict)
    answers: int = 0  # distinct train answers: what `TrainConfig.sized_for` scales the recipe by
    familiar: np.ndarray | None = None  # per train query: False for the unfamiliar rows (unfamiliar_features)

    def sized(self, config: TrainConfig) -> TrainConfig:
        """`config` fitted to the size of these tables (fewer CV folds and smaller leaves on a
        small training set; unchanged for Bliss)."""
        return config.sized_for(self.answers or len(set(self.folds.tolist())), len(self.y_train))[0]


def build_tables(train: Sequence[Query], base_encoder: Encoder, config: TrainConfig, log: Log = print,
                 meanwhile: Callable[[Exported], None] | None = None) -> TrainingTables:
    """OOF features of train and the final extractor (fitted on all of train, for val and test).

    A small training set gets a smaller recipe (`TrainConfig.sized_for`: fewer folds, smaller
    LightGBM leaves), said in the log; fewer than MIN_ANSWERS distinct answers is a UsageError.
    `meanwhile`: work for the core fine-tuning leaves free (`finetune_ahead`).
    """
    answers = check_trainable(train)
    exact = base_encoder
    config, notes = config.sized_for(answers, sum(len(q.options) for q in train))
    for note in notes:
        log(f"small training set ({len(train)} clues, {answers} answers): {note}")
    started = time.perf_counter()
    if finetune_ahead(train, config, exact, log, meanwhile):
        log(f"fold encoders fine-tuned in a process of their own in {time.perf_counter() - started:.0f} s")
    base_encoder = as_served(base_encoder, config)
    X_train, folds, oof_reused = oof_features(train, base_encoder, config, log)
    y_train, sizes_train = labels_and_sizes(train)
    familiar = np.ones(len(train), dtype=bool)
    if config.unfamiliar_groups > 0:
        X_far, far, far_folds, far_reused = unfamiliar_features(train, folds, base_encoder, config, log, exact)
        y_far, sizes_far = labels_and_sizes(far)
        X_train = pd.concat([X_train, X_far], ignore_index=True)
        y_train, sizes_train = np.concatenate([y_train, y_far]), np.concatenate([sizes_train, sizes_far])
        folds = np.concatenate([folds, far_folds])
        familiar = np.concatenate([familiar, np.zeros(len(far), dtype=bool)])
        oof_reused += far_reused
    oof_seconds = time.perf_counter() - started
    extractor, model, final_reused = final_extractor(train, base_encoder, config, log)
    seconds = {"oof": oof_seconds, "final_features": time.perf_counter() - started - oof_seconds,
               "finetuned_encoders_reused_from_cache": oof_reused + int(final_reused)}
    return TrainingTables(X_train, y_train, sizes_train, folds, extractor, model, seconds, answers, familiar)


def check_trainable(train: Sequence[Query]) -> int:
    """The number of distinct answers of `train`, which must be at least MIN_ANSWERS: the
    out-of-fold features hold answers out, so one answer leaves nothing to learn from."""
    answers = len({q.answer for q in train if q.answer is not None})
    if answers < MIN_ANSWERS:
        raise UsageError(
            f"training needs clues with at least {MIN_ANSWERS} different answers (found {answers} "
            f"in {len(train)} clues): out-of-fold features hold each answer out of the tables its rows are scored with"
        )
    return answers
