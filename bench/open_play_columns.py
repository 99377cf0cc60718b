"""Open play's columns on train folds: its ranker's train-CV with and without some of them.

    PICTORANK_CACHE_DIR=.cache/embeddings .venv/bin/python bench/open_play_columns.py --model DIR \
        [--without wn_kind_hints wn_kind_first] [--without ...]

Builds open play's training tables for the model folder DIR exactly as `pictorank train` does
(pictorank.train.open_play.tables_for_lexicon: each fold's clues retrieved from the lexicon in the
space of the encoder fine-tuned on the other folds; read from the fine-tuning cache when there),
once, then chooses and cross-validates open play's LambdaMART on all of the columns and once for
each `--without` set left out (pictorank.train.open_play.cross_validate, folds by answer). Prints
Hits@1, Hits@10, MRR over the train clues whose answer is in the lexicon, and each variant minus
all columns with its standard error clustered by answer. Val is not read.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from harness import reference_line  # bench/harness.py, beside this file
from pictorank.encoders import Encoder
from pictorank.evaluation.significance import clustered_se
from pictorank.lexicon import DEFAULT_SOURCE, guess_key, load_lexicon
from pictorank.lexicon import store as lexicon_store
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.ranker import load_ranker
from pictorank.ranker.learned import METADATA_FILE
from pictorank.settings import CommonSettings
from pictorank.train.config import TrainConfig
from pictorank.train.open_play import cross_validate, tables_for_lexicon, train_cv_estimate

MEASURES = {"hits@1": lambda r: (r < 1).astype(float), "hits@10": lambda r: (r < 10).astype(float),
            "mrr": lambda r: np.where(np.isfinite(r), 1 / (r + 1), 0.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a model folder made by `pictorank train`, with its lexicon")
    parser.add_argument("--without", nargs="+", action="append", default=[], metavar="COLUMN",
                        help="columns left out together (one variant per --without)")
    parser.add_argument("--data", default="data/bliss")
    args = parser.parse_args()
    print(reference_line())
    vocab = load_hints(f"{args.data}/hint_descriptions.csv")
    train = to_queries(load_puzzles(f"{args.data}/train.csv", vocab), vocab)
    learned = load_ranker(args.model)
    config = TrainConfig.from_dict(json.loads((Path(args.model) / METADATA_FILE).read_text(encoding="utf-8"))["config"])
    settings = CommonSettings()
    encoder = Encoder(cache_dir=settings.cache_dir, max_cached=settings.max_cached_strings)
    tables, _ = tables_for_lexicon(lexicon_store.load(Path(args.model)), train, load_lexicon(DEFAULT_SOURCE), encoder,
                                   config, print)
    groups = [guess_key(q.answer or "") for q in tables.queries]
    variants = {"all columns": ()} | {"without " + ", ".join(names): tuple(names) for names in args.without}
    ranks = {}
    for name, left_out in variants.items():
        unknown = set(left_out) - set(tables.X.columns)
        if unknown:
            raise SystemExit(f"open_play_columns: no such column in the tables: {', '.join(sorted(unknown))}")
        ranks[name] = cross_validate(learned, replace(tables, X=tables.X.drop(columns=list(left_out))), config,
                                     lambda message: None).ranks
    print(f"\n{len(tables.queries)} train clues with their answer in the lexicon, {len(set(groups))} answers; "
          f"retrieval ceiling {train_cv_estimate(tables, ranks['all columns'])['ceiling']:.3f}\n")
    print("| variant | " + " | ".join(MEASURES) + " | " + " | ".join(f"{m} - all (± SE)" for m in MEASURES) + " |")
    print("|---" * (1 + 2 * len(MEASURES)) + "|")
    base = {m: f(ranks["all columns"]) for m, f in MEASURES.items()}
    for name, r in ranks.items():
        values = {m: f(r) for m, f in MEASURES.items()}
        diffs = [f"{np.mean(values[m] - base[m]):+.4f} ± {clustered_se(values[m] - base[m], groups):.4f}" for m in MEASURES]
        print(f"| {name} | " + " | ".join(f"{np.mean(v):.4f}" for v in values.values()) + " | " + " | ".join(diffs) + " |")


if __name__ == "__main__":
    main()
