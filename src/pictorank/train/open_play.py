"""Fitting open play's ranker (pictorank.open_play) on train alone.

Its rows are what open play meets: for each train clue whose answer is in the lexicon, the
lexicon words nearest to the clue that a player would take as guesses (no hint word, one form of
each word: pictorank.lexicon.playable), with a label on the answer; with the lexicon's glosses,
found by word and gloss and given the gloss columns, as the service finds and ranks them. As for the learned ranker's
table (pictorank.train.oof), every clue is retrieved and scored by an encoder and tables fitted
on the other folds only: in its own space a fold's answers sit closer to their clues than any
unseen answer will, and the ranker would learn to trust it. The folds and fold encoders are
training's own, so with a fine-tuning cache they are read back, not fine-tuned again.

Clues whose answer is not retrieved teach nothing and are left out of the fit; the train-CV
estimate counts them as misses, as open play does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from pictorank.encoders import Encoder, StoredVectors
from pictorank.errors import UsageError
from pictorank.lexicon import Lexicon, guess_key, matches, without_qualifier
from pictorank.lexicon import store as lexicon_store
from pictorank.lexicon.store import StoredLexicon
from pictorank.open_play import (DEFAULT_CANDIDATES, OPEN_PLAY_COLUMNS, OpenPlayRanker, VocabularyIndex,
                                 add_open_play_columns, column_names)
from pictorank.query import Query
from pictorank.ranker import LearnedRanker
from pictorank.ranker.base import chunks
from pictorank.train.config import Log, TrainConfig
from pictorank.train.estimate import answer_ranks, blended
from pictorank.train.lambdamart import cv_select, fit_bag, held_out_scores
from pictorank.train.fold_encoders import query_folds
from pictorank.train.oof import as_served, fold_extractor

# Clues whose candidates are scored at once. A clue's rows do not depend on the others scored with
# it; a whole fold's clues at once held every candidate's products with the train answers, in both
# spaces, together: the largest allocation of the stage.
CLUES_AT_ONCE = 128


@dataclass
class OpenPlayTables:
    """The open-play rows of the train clues whose answer is in the lexicon: one group per clue
    (its candidates), in clue order; `found` says which groups hold the answer."""

    X: pd.DataFrame
    y: np.ndarray
    sizes: np.ndarray
    folds: np.ndarray
    found: np.ndarray
    queries: list[Query]


def open_play_tables(train: Sequence[Query], lexicon: Lexicon, base_encoder: Encoder, config: TrainConfig,
                     log: Log, candidates: int = DEFAULT_CANDIDATES, glosses: StoredVectors | None = None,
                     search_glosses: bool = False) -> OpenPlayTables:
    """Each fold's clues retrieved from `lexicon` in its fold encoder's space (the base space
    without fine-tuning) by open play's own index (pictorank.open_play), and scored by an
    extractor fitted on the other folds. With `glosses` (the words' gloss vectors in the base
    space) the rows get GLOSS_COLUMNS, and with `search_glosses` the words are found by their
    glosses too, as the service finds them."""
    keys = {guess_key(w) for w in lexicon.words}
    folds = query_folds(train, config.folds, config.seed)
    zipf = lexicon.frequencies()
    tables, queries, clue_folds = [], [], []
    for k in range(config.folds):
        started = time.perf_counter()
        inside = [q for q, f in zip(train, folds) if f != k]
        held = [q for q, f in zip(train, folds) if f == k and without_qualifier(q.answer or "").casefold() in keys]
        if not held or not inside:
            continue
        table, rows = _fold_rows(inside, held, lexicon, base_encoder, config, log, candidates, zipf, glosses,
                                 search_glosses)
        tables.append(table)
        queries += rows
        clue_folds += [k] * len(rows)
        log(f"open play fold {k + 1}/{config.folds}: {len(rows)} clues' lexicon candidates in "
            f"{time.perf_counter() - started:.0f} s")
    if not queries:
        raise UsageError("no train clue has its answer in the lexicon: nothing to fit open play's ranker on")
    y = np.array([float(matches(o, q.answer or "")) for q in queries for o in q.options])
    sizes = np.array([len(q.options) for q in queries])
    found_answer = np.array([any(matches(o, q.answer or "") for o in q.options) for q in queries])
    return OpenPlayTables(pd.concat(tables, ignore_index=True), y, sizes, np.array(clue_folds), found_answer, queries)


def _fold_rows(inside: Sequence[Query], held: Sequence[Query], lexicon: Lexicon, base_encoder: Encoder,
               config: TrainConfig, log: Log, candidates: int, zipf: dict[str, float],
               glosses: StoredVectors | None, search_glosses: bool) -> tuple[pd.DataFrame, list[Query]]:
    """One fold's rows: the `held` clues' candidates from the lexicon in the space of the fold
    encoder fitted on `inside`, with their columns. A function of its own so that the fold's
    lexicon vectors and index (hundreds of megabytes) are gone before the next fold builds its own."""
    extractor, ft, _ = fold_extractor(inside, base_encoder, config, log)
    space = ft or base_encoder
    stored = lexicon_store.embed(lexicon, {"space": space}, "space")
    space.know(stored.vectors["space"])  # the candidates' vectors, as a served model's encoders know them
    index = VocabularyIndex.of_lexicon(lexicon, stored.search_vectors(), space,
                                       glosses if search_glosses else None, base_encoder)
    found = index.candidates([q.hints for q in held], candidates, base_encoder)
    rows = [Query(q.hints, tuple(words), q.answer) for q, words in zip(held, found)]
    names = column_names(glosses is not None)
    tables = [add_open_play_columns(extractor.transform(part), part, zipf, base_encoder, glosses, names)
              for part in chunks(rows, CLUES_AT_ONCE)]
    return pd.concat(tables, ignore_index=True), rows


@dataclass
class OpenPlayCV:
    """Open play's LambdaMART setting chosen by grouped CV on train (`cross_validate`), and each
    train clue's held-out rank of its answer under it (inf where the answer was not retrieved)."""

    columns: list[str]
    params: dict[str, Any]
    trees: int
    cv: list[dict[str, Any]]
    ranks: np.ndarray


def cross_validate(learned: LearnedRanker, tables: OpenPlayTables, config: TrainConfig, log: Log) -> OpenPlayCV:
    """Choose the LambdaMART setting by grouped CV over the learned ranker's columns and the
    OPEN_PLAY_COLUMNS the tables have, on the clues whose answer was retrieved, and rank every
    clue's candidates by its held-out scores (as served: blended when the learned ranker blends)."""
    columns = [*learned.feature_names, *(c for c in OPEN_PLAY_COLUMNS if c in tables.X.columns)]
    if tables.found.sum() < 2 or len(set(tables.folds[tables.found].tolist())) < 2:
        raise UsageError("too few train clues have their answer among their lexicon candidates to fit open play's ranker")
    X, y, sizes, folds, config = _retrieved(tables, columns, config)
    params, trees, cv = cv_select(X, y, sizes, folds, config, log)
    held_out = held_out_scores(X, y, sizes, folds, params, trees, config)
    keep = np.repeat(tables.found, tables.sizes)
    scores = blended(held_out, tables.X.loc[keep].reset_index(drop=True)) if learned.fallback else held_out
    bounds = np.cumsum([0, *tables.sizes])
    labels = [tables.y[bounds[i] : bounds[i + 1]] for i in np.flatnonzero(tables.found)]
    ranks = np.full(len(tables.queries), np.inf)
    ranks[tables.found] = answer_ranks(scores, labels)
    return OpenPlayCV(columns, params, trees, cv, ranks)


def fit_open_play(learned: LearnedRanker, tables: OpenPlayTables, config: TrainConfig, log: Log,
                  zipf: dict[str, float] | None = None, glosses: StoredVectors | None = None) -> OpenPlayRanker:
    """LambdaMART over the learned ranker's columns, WORD_COLUMNS, and the GLOSS_COLUMNS and
    WORDNET_COLUMNS the tables have, chosen as the learned ranker's (`cross_validate`) and fitted
    as a bag on all the clues whose answer was retrieved; its `training` holds the train-CV
    estimate over all the clues. `glosses`: the gloss vectors the tables were made with."""
    started = time.perf_counter()
    chosen = cross_validate(learned, tables, config, log)
    X, y, sizes, _, sized = _retrieved(tables, chosen.columns, config)
    bag = fit_bag(X, y, sizes, chosen.params, chosen.trees, sized)
    estimate = train_cv_estimate(tables, chosen.ranks)
    log(f"open play's LambdaMART {chosen.params}: {len(bag)} boosters of {chosen.trees} trees; train-CV over "
        f"{len(tables.queries)} clues: Hits@1 {estimate['hits@1']:.3f}, Hits@10 {estimate['hits@10']:.3f}, "
        f"retrieval ceiling {estimate['ceiling']:.3f}")
    training = {"lgbm_params": chosen.params, "trees": [chosen.trees] * len(bag), "cv": chosen.cv,
                "train_cv": estimate, "candidates": int(tables.sizes.max()),
                "lgbm_seconds": time.perf_counter() - started}
    return OpenPlayRanker(learned, bag, chosen.columns, zipf, training, glosses)


def _retrieved(tables: OpenPlayTables, columns: list[str], config: TrainConfig
               ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, TrainConfig]:
    """What LambdaMART learns from: the `columns` of the clues whose answer was retrieved, their
    labels, group sizes and folds, and `config` sized for them (TrainConfig.sized_for)."""
    keep = np.repeat(tables.found, tables.sizes)
    X, y = tables.X.loc[keep, columns].reset_index(drop=True), tables.y[keep]
    sizes, folds = tables.sizes[tables.found], tables.folds[tables.found]
    return X, y, sizes, folds, config.sized_for(len(set(folds.tolist())), len(y))[0]


def train_cv_estimate(tables: OpenPlayTables, ranks: np.ndarray) -> dict[str, Any]:
    """Hits@1, Hits@10 and MRR of the held-out ranks over every clue, one whose answer was not
    retrieved counting as a miss; and the retrieval ceiling."""
    return {"clues": len(tables.queries), "ceiling": float(tables.found.mean()),
            "hits@1": float(np.mean(ranks < 1)), "hits@10": float(np.mean(ranks < 10)),
            "mrr": float(np.mean(np.where(np.isfinite(ranks), 1 / (ranks + 1), 0.0)))}


def tables_for_lexicon(stored: StoredLexicon | None, train: Sequence[Query], lexicon: Lexicon, encoder: Encoder,
                       config: TrainConfig, log: Log, candidates: int = DEFAULT_CANDIDATES
                       ) -> tuple[OpenPlayTables, StoredVectors | None]:
    """Open play's train tables for a model whose stored lexicon is `stored` (None: it stores
    none), and the glosses they were made with (None without). `encoder`: the base encoder
    training ran on (`as_served` gives the features' one). With glosses stored by that encoder,
    the words are retrieved and ranked by their glosses too, as the service does."""
    base = as_served(encoder, config)
    glosses = None
    if stored is not None and stored.encoder_ids.get("base") == base.model_id:
        base.know(stored.vectors["base"])  # the candidates' base vectors, as served
        glosses = stored.glosses
    log(f"open play reads {len(glosses)} stored glosses" if glosses is not None
        else "open play reads no glosses: none stored by this base encoder beside the model")
    tables = open_play_tables(train, lexicon, base, config, log, candidates, glosses, search_glosses=glosses is not None)
    return tables, glosses


def fit_for_lexicon(words: Lexicon, learned: LearnedRanker, train: Sequence[Query], lexicon: Lexicon,
                    encoder: Encoder, config: TrainConfig, log: Log,
                    candidates: int = DEFAULT_CANDIDATES) -> OpenPlayRanker:
    """`pictorank train`'s open play: its ranker for the model `learned`, whose lexicon stage
    stores `words` (pictorank.open_play.lexicon_with_data), fitted on the tables of `lexicon`'s
    candidates (`tables_for_lexicon`) and returned unsaved: it serves from the stored lexicon, so
    the pipeline saves it once that is stored. The words' base vectors and glosses are read as
    the lexicon stage stores them; the cache holds them when training embedded them ahead."""
    stored = lexicon_store.embed_with_glosses(words, {"base": as_served(encoder, config)}, "base")
    tables, glosses = tables_for_lexicon(stored, train, lexicon, encoder, config, log, candidates)
    return fit_open_play(learned, tables, config, log, lexicon.frequencies(), glosses)
