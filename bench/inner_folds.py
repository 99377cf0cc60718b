"""The recipe's out-of-fold folds on train folds: the whole recipe trained on two thirds of train
with each number of inner folds, and scored on the other third, with options and in open play.

    PICTORANK_CACHE_DIR=.cache/embeddings .venv/bin/python bench/inner_folds.py [--folds 2 3]

`TrainConfig.folds` sets how many fold encoders are fine-tuned for the OOF tables and open play's
rows, and so how much of a training run's time they take: each fold encoder is a fine-tune, a
lexicon pass and two tables. A train-CV estimate cannot compare fold counts (the estimate itself
is made over those folds), so this bench nests, as bench/final_epochs.py does: for each outer
fold by answer, the recipe (inner folds and LambdaMART CV with that many folds, unfamiliar
groups, final encoder, open play's ranker on the lexicon with glosses) is trained on the other
folds alone, then ranks the outer fold's clues once with their options, and once in open play:
candidates from the lexicon in the final encoder's space, words and glosses, as the service
finds them, ranked by open play's ranker. The unfamiliar groups' and the final encoder's
fine-tunes do not depend on the fold count, so the fine-tuning cache shares them.

Prints, over all of train's clues (each scored once, by a recipe that never saw its answer),
Hits@1 and MRR with options, Hits@1 and Hits@10 in open play (an answer not retrieved is a
miss), per fold count, and each minus the first with its standard error clustered by answer.
Val is not read.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Sequence

import numpy as np

from harness import OUTER_FOLDS, nested_start  # bench/harness.py, beside this file
from pictorank.encoders import Encoder, StoredVectors
from pictorank.evaluation.significance import clustered_se
from pictorank.lexicon import Lexicon, guess_key, matches
from pictorank.lexicon import store as lexicon_store
from pictorank.open_play import DEFAULT_CANDIDATES, OpenPlayRanker, VocabularyIndex
from pictorank.query import Query
from pictorank.ranker import LearnedRanker
from pictorank.train import TrainConfig, build_tables, fit_ranker_from_tables
from pictorank.train.fold_encoders import oof_split
from pictorank.train.oof import as_served
from pictorank.train.open_play import fit_open_play, open_play_tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", nargs="+", type=int, default=[2, 3])
    args, train, exact, outer, lexicon = nested_start(parser)
    shipped = TrainConfig()
    base = as_served(exact, shipped)
    glosses = lexicon_store.embed_glosses(lexicon, base)
    ranks = {f: {"options": np.zeros(len(train)), "open play": np.zeros(len(train))} for f in args.folds}
    for k in range(OUTER_FOLDS):
        inside, held = oof_split(train, outer, k)
        queries = [train[i] for i in held]
        for folds in args.folds:
            config = dataclasses.replace(shipped, folds=folds, cv_folds=folds)
            print(f"outer fold {k + 1}/{OUTER_FOLDS}, {folds} inner folds: the recipe on {len(inside)} clues, "
                  f"scored on {len(held)}", flush=True)
            ranker = fit_ranker_from_tables(build_tables(inside, exact, config, print), config, print)
            ranks[folds]["options"][held] = [r.options.index(q.answer) for q, r in zip(queries, ranker.rank(queries))]
            tables = open_play_tables(inside, lexicon, base, config, print, DEFAULT_CANDIDATES, glosses, True)
            open_ranker = fit_open_play(ranker, tables, config, print, lexicon.frequencies(), glosses)
            ranks[folds]["open play"][held] = _open_play_ranks(queries, lexicon, ranker, open_ranker, base, glosses)
            for mode, found in ranks[folds].items():
                print(f"  {folds} inner folds, {mode}: Hits@1 {np.mean(found[held] == 0):.4f}, "
                      f"MRR {np.mean(1 / (found[held] + 1)):.4f}", flush=True)
    _table(train, ranks, args.folds)


def _open_play_ranks(queries: Sequence[Query], lexicon: Lexicon, ranker: LearnedRanker, open_ranker: OpenPlayRanker,
                     base: Encoder, glosses: StoredVectors | None) -> np.ndarray:
    """Each clue's rank of its answer among open play's ranked candidates, as the service finds
    them (the lexicon's words and glosses, in the final encoder's space); inf where not found."""
    space = ranker.extractor.finetuned_encoder or base
    stored = lexicon_store.embed(lexicon, {"space": space}, "space")
    space.know(stored.vectors["space"])
    index = VocabularyIndex.of_lexicon(lexicon, stored.search_vectors(), space, glosses, base)
    found = index.candidates([q.hints for q in queries], DEFAULT_CANDIDATES, base)
    ranked = open_ranker.rank([Query(q.hints, tuple(words), q.answer) for q, words in zip(queries, found)])
    return np.array([next((i for i, w in enumerate(r.options) if matches(w, q.answer or "")), np.inf)
                     for q, r in zip(queries, ranked)])


def _table(train: Sequence[Query], ranks: dict[int, dict[str, np.ndarray]], settings: list[int]) -> None:
    groups = [guess_key(q.answer or "") for q in train]
    measures = {
        "hits@1": lambda f: ranks[f]["options"] == 0,
        "mrr": lambda f: 1 / (ranks[f]["options"] + 1),
        "open play hits@1": lambda f: ranks[f]["open play"] == 0,
        "open play hits@10": lambda f: ranks[f]["open play"] < 10,
    }
    reference = settings[0]
    print(f"\n{len(train)} train clues, {len(set(groups))} answers, {OUTER_FOLDS} outer folds by answer\n")
    print("| inner folds | " + " | ".join(measures) + " | "
          + " | ".join(f"{m} - {reference} folds (± SE)" for m in measures) + " |")
    print("|---" * (1 + 2 * len(measures)) + "|")
    for folds in settings:
        values = {m: np.asarray(f(folds), dtype=float) for m, f in measures.items()}
        first = {m: np.asarray(f(reference), dtype=float) for m, f in measures.items()}
        diffs = [f"{np.mean(values[m] - first[m]):+.4f} ± {clustered_se(values[m] - first[m], groups):.4f}"
                 for m in measures]
        print(f"| {folds} | " + " | ".join(f"{np.mean(v):.4f}" for v in values.values()) + " | " + " | ".join(diffs) + " |")


if __name__ == "__main__":
    main()
