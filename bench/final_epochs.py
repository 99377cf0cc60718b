"""The final encoder's epochs on train folds: the whole recipe trained on two thirds of train and
scored on the other third, with the final encoder fine-tuned for each number of epochs.

    PICTORANK_CACHE_DIR=.cache/embeddings .venv/bin/python bench/final_epochs.py [--epochs 1 3]

`pictorank train` fine-tunes the fold encoders (whose vectors LightGBM learns from) for
`oof_epochs` and the final encoder (whose vectors val and test are ranked with) for
`final_epochs`. A train-CV estimate cannot see the final encoder, so this bench nests: for each
outer fold by answer (training's own folds), the recipe's tables and LambdaMART bag are built on
the other folds alone (their own inner folds, unfamiliar groups and final encoder), then the
outer fold's clues are ranked once per final encoder, the bag and tables shared. It also
retrieves those clues' answers from the lexicon in each final encoder's space (open play's index,
words only, 100 candidates): the retrieval ceiling open play's ranker is bounded by.

Prints, over all of train's clues (each scored once, by a recipe that never saw its answer),
Hits@1, MRR and the retrieval ceiling per epochs, and each minus the first with its standard
error clustered by answer. Val is not read.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np

from harness import OUTER_FOLDS, nested_start  # bench/harness.py, beside this file
from pictorank.encoders import Encoder
from pictorank.evaluation.significance import clustered_se
from pictorank.lexicon import guess_key, matches
from pictorank.lexicon import store as lexicon_store
from pictorank.open_play import VocabularyIndex
from pictorank.train import TrainConfig, build_tables, fit_ranker_from_tables
from pictorank.train.fold_encoders import oof_split
from pictorank.train.oof import as_served, final_extractor

CANDIDATES = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", nargs="+", type=float, default=[1.0, 3.0])
    args, train, exact, outer, lexicon = nested_start(parser)
    config = TrainConfig()
    first = {e: np.zeros(len(train)) for e in args.epochs}
    reciprocal = {e: np.zeros(len(train)) for e in args.epochs}
    retrieved = {e: np.zeros(len(train)) for e in args.epochs}
    for k in range(OUTER_FOLDS):
        inside, held = oof_split(train, outer, k)
        print(f"outer fold {k + 1}/{OUTER_FOLDS}: the recipe on {len(inside)} clues, scored on {len(held)}", flush=True)
        tables = build_tables(inside, exact, config, print)
        ranker = fit_ranker_from_tables(tables, config, print)
        base = as_served(exact, config)
        queries = [train[i] for i in held]
        for epochs in args.epochs:
            extractor, _, _ = final_extractor(inside, base, TrainConfig(final_epochs=epochs), print)
            variant = copy.copy(ranker)
            variant.extractor = extractor
            ranked = variant.rank(queries)
            ranks = np.array([r.options.index(q.answer) for q, r in zip(queries, ranked)])
            first[epochs][held] = ranks == 0
            reciprocal[epochs][held] = 1 / (ranks + 1)
            retrieved[epochs][held] = _retrieved(queries, lexicon, extractor.finetuned_encoder, base)
            print(f"  final encoder of {epochs:g} epoch(s): Hits@1 {np.mean(ranks == 0):.4f}, "
                  f"ceiling {np.mean(retrieved[epochs][held]):.4f}", flush=True)
    groups = [guess_key(q.answer or "") for q in train]
    measures = {"hits@1": first, "mrr": reciprocal, f"ceiling@{CANDIDATES}": retrieved}
    reference = args.epochs[0]
    print(f"\n{len(train)} train clues, {len(set(groups))} answers, {OUTER_FOLDS} outer folds by answer\n")
    print("| final epochs | " + " | ".join(measures) + " | "
          + " | ".join(f"{m} - {reference:g} epoch(s) (± SE)" for m in measures) + " |")
    print("|---" * (1 + 2 * len(measures)) + "|")
    for epochs in args.epochs:
        diffs = [f"{np.mean(v[epochs] - v[reference]):+.4f} ± {clustered_se(v[epochs] - v[reference], groups):.4f}"
                 for v in measures.values()]
        print(f"| {epochs:g} | " + " | ".join(f"{np.mean(v[epochs]):.4f}" for v in measures.values()) + " | "
              + " | ".join(diffs) + " |")


def _retrieved(queries, lexicon, space: Encoder, base: Encoder) -> np.ndarray:
    """1 where the clue's answer is among open play's candidates from the lexicon in `space`
    (words only), 0 elsewhere (an answer the lexicon lacks included)."""
    stored = lexicon_store.embed(lexicon, {"space": space}, "space")
    space.know(stored.vectors["space"])
    index = VocabularyIndex.of_lexicon(lexicon, stored.search_vectors(), space, None, base)
    found = index.candidates([q.hints for q in queries], CANDIDATES, base)
    return np.array([any(matches(w, q.answer or "") for w in words) for q, words in zip(queries, found)], dtype=float)


if __name__ == "__main__":
    main()
