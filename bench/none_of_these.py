"""Ask mode's confidence on Bliss val when the player's word is, and is not, among the options.

    PYTHONPATH=src python bench/none_of_these.py [--model DIR]...   # cosine, and each learned model

For every val puzzle, ranked twice, with its options as given and with the answer removed (as
if the player had left their word out): the ranker's calibrated confidence, the shipped
none-of-these probability (pictorank.ranker.absence, fitted on train only) and the confidence
Ask mode shows, confidence * (1 - none_of_these). Printed as a table for
docs/experiments/none-of-these.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from pictorank.encoders import Encoder
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import Ranker, load_ranker, make_ranker
from pictorank.ranker.absence import AbsenceModel, clue_similarities
from pictorank.settings import CommonSettings, use_offline_environment

ROOT = Path(__file__).resolve().parents[1]


def shown_confidences(ranker: Ranker, absence: AbsenceModel, encoder: Encoder, queries: list[Query]) -> tuple:
    """(ranker confidence, none-of-these, Ask mode's confidence) arrays for the queries."""
    confidence = np.array([r.confidence for r in ranker.rank(queries)], dtype=float)
    none = np.array([absence.probability(s) for s in clue_similarities(encoder, queries)], dtype=float)
    return confidence, none, confidence * (1 - none)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, action="append", default=[], help="learned model directory")
    args = parser.parse_args(argv)
    use_offline_environment()
    vocab = load_hints(ROOT / "data/bliss/hint_descriptions.csv")
    kept = to_queries(load_puzzles(ROOT / "data/bliss/val.csv", vocab), vocab)
    removed = [Query(q.hints, tuple(o for o in q.options if o != q.answer)) for q in kept]
    encoder = Encoder(cache_dir=CommonSettings().cache_dir)
    absence = AbsenceModel.load()
    rankers: dict[str, Ranker] = {"cosine": make_ranker("cosine", encoder=encoder)}
    rankers.update({f"learned:{d.name}": load_ranker(d, encoder=encoder) for d in args.model})
    print(f"Bliss val, {len(kept)} puzzles; none-of-these AUC (answer removed vs kept) shown per ranker's row\n")
    print("| ranker | answer among options: confidence / none / shown | answer removed: confidence / none / shown | AUC |")
    print("|---|---|---|---|")
    for name, ranker in rankers.items():
        k = shown_confidences(ranker, absence, encoder, kept)
        r = shown_confidences(ranker, absence, encoder, removed)
        auc = roc_auc_score([0] * len(kept) + [1] * len(removed), np.concatenate([k[1], r[1]]))
        print(f"| {name} | {k[0].mean():.3f} / {k[1].mean():.3f} / {k[2].mean():.3f} "
              f"| {r[0].mean():.3f} / {r[1].mean():.3f} / {r[2].mean():.3f} | {auc:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
