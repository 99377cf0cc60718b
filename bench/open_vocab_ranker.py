"""Should open play have a ranker of its own, and what should it read? Measured on train folds only.

    .venv/bin/python bench/open_vocab_ranker.py --model DIR [--cache DIR] [--candidates 100] [--tables FILE]

Open-vocabulary mode hands a ranker the lexicon words nearest to a clue. The learned ranker was
fitted to pick the answer among a puzzle's own options, which look nothing like a lexicon's
nearest words (phrases that restate a hint, rare compounds, words of every frequency). This bench
builds the rows open play's ranker learns from, exactly as `pictorank train` builds them
(pictorank.train.open_play.open_play_tables: each train clue whose answer is in the lexicon,
retrieved and scored by a fold encoder and tables that never saw its answer), and compares on
them, each clue scored by models that never saw its fold:

- served before: DIR's LambdaMART bag with the frequency prior (weights 0 and 0.2), as open play
  ranked before it had a ranker of its own (the bag saw these clues' option lists, so if
  anything its figures here are flattering);
- open play's ranker fitted on the other folds: over the learned ranker's columns only; with the
  words' frequency; with their frequency and length (pictorank.features.word), the shipped set;
- the shipped set with the frequency prior added on top, by weight.

Each row's difference from the "served before" row is printed with its standard error,
clustered by answer. `--cache` names the fine-tuning cache of the training run that made DIR, so
its fold encoders are read back rather than fine-tuned again (as `pictorank train` does);
`--tables` keeps the rows for the next run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from open_vocab_retrieval import clustered_se  # bench/ is the script's folder, on sys.path
from pictorank.encoders import Encoder
from pictorank.lexicon import Lexicon, guess_key, matches, with_prior
from pictorank.lexicon.words import default_lexicon
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import load_ranker
from pictorank.ranker.fallback import COSINE_COLUMN, KNOWN_COLUMN, blend_rows
from pictorank.api.settings import Settings
from pictorank.train.config import TrainConfig
from pictorank.train.lambdamart import cv_select, held_out_scores
from pictorank.train.oof import as_served
from pictorank.train.open_play import OpenPlayTables, open_play_tables

PRIORS = (0.1, 0.2, 0.5)


def ranks_of(scores: list[np.ndarray], tables: OpenPlayTables, zipf: dict[str, float], prior: float) -> list[int | None]:
    """The answer's place in each clue's ranking by `scores` (and the prior at weight `prior`)."""
    ranks = []
    for row, query in zip(scores, tables.queries):
        ordered, _ = with_prior(list(query.options), list(row), zipf, prior)
        ranks.append(next((r for r, o in enumerate(ordered) if matches(o, query.answer or "")), None))
    return ranks


def metrics(ranks: list[int | None]) -> dict[str, np.ndarray]:
    return {"hits@1": np.array([r is not None and r < 1 for r in ranks], float),
            "hits@10": np.array([r is not None and r < 10 for r in ranks], float),
            "mrr": np.array([1 / (r + 1) if r is not None else 0.0 for r in ranks])}


def held_out(tables: OpenPlayTables, columns: list[str], config: TrainConfig) -> tuple[list[np.ndarray], str]:
    """Each clue's scores from a LambdaMART fitted on the other folds' clues whose answer was
    retrieved (parameters and trees chosen by grouped CV, as `pictorank train` does)."""
    keep = np.repeat(tables.found, tables.sizes)
    X, y = tables.X.loc[keep, columns].reset_index(drop=True), tables.y[keep]
    sizes, folds = tables.sizes[tables.found], tables.folds[tables.found]
    params, trees, _ = cv_select(X, y, sizes, folds, config, lambda message: None)
    found = iter(held_out_scores(X, y, sizes, folds, params, trees, config))
    scores = [next(found) if hit else np.zeros(size) for hit, size in zip(tables.found, tables.sizes)]
    return scores, f"{params['num_leaves']} leaves, {trees} trees"


def training_setup(model: Path, cache: Path | None) -> tuple[TrainConfig, list[Query], Lexicon, Encoder, Any]:
    """What `pictorank train` had when it made `model`: its config, the train clues, the default
    lexicon, the base encoder over the fine-tuning cache `cache` (else the settings') and the
    learned ranker it saved."""
    settings = Settings()
    config = TrainConfig.from_dict(json.loads((model / "metadata.json").read_text())["config"])
    vocab = load_hints(settings.data_dir / "hint_descriptions.csv")
    train = to_queries(load_puzzles(settings.data_dir / "train.csv", vocab), vocab)
    encoder = Encoder(cache_dir=cache or settings.cache_dir)
    return config, train, default_lexicon(), encoder, load_ranker(model, encoder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None, help="fine-tuning cache of the run that trained DIR")
    parser.add_argument("--candidates", type=int, default=100, help="lexicon words a clue (service default 100)")
    parser.add_argument("--tables", type=Path, default=None, help="keep the rows here between runs (pickle)")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    config, train, lexicon, encoder, learned = training_setup(args.model, args.cache)
    zipf = lexicon.frequencies()
    started = time.perf_counter()
    if args.tables is not None and args.tables.exists():
        tables = pd.read_pickle(args.tables)
    else:
        tables = open_play_tables(train, lexicon, as_served(encoder, config), config,
                                  lambda message: print(message, file=sys.stderr), args.candidates)
        if args.tables is not None:
            pd.to_pickle(tables, args.tables)
    print(f"## {len(tables.queries)} train clues with their answer in the lexicon of {len(lexicon):,} words, "
          f"{args.candidates} candidates a clue; retrieval ceiling out of fold {tables.found.mean():.3f} "
          f"(rows built in {time.perf_counter() - started:.0f} s)\n")

    bounds = np.cumsum([0, *tables.sizes])
    bag = learned.booster.predict(tables.X[learned.feature_names].to_numpy(), num_threads=2)
    before = [bag[bounds[i] : bounds[i + 1]] for i in range(len(tables.queries))]
    if learned.fallback:
        before = blend_rows(before, tables.X[COSINE_COLUMN].to_numpy(), tables.X[KNOWN_COLUMN].to_numpy())
    results = {f"served before: bag, prior {w}": metrics(ranks_of(before, tables, zipf, w)) for w in (0.0, 0.2)}
    names = list(learned.feature_names)
    for label, columns in {"learned columns": names, "+ frequency": [*names, "open_zipf", "open_zipf_z"],
                           "+ frequency and length (shipped)": [*names, "open_zipf", "open_zipf_z", "open_words"]}.items():
        started = time.perf_counter()
        scores, chosen = held_out(tables, columns, config)
        results[f"open play's ranker, {label} ({chosen})"] = metrics(ranks_of(scores, tables, zipf, 0.0))
        print(f"{label}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    for w in PRIORS:
        results[f"shipped, with the prior at {w} on top"] = metrics(ranks_of(scores, tables, zipf, w))

    print_differences(results, results["served before: bag, prior 0.2"], [guess_key(q.answer or "") for q in tables.queries])


def print_differences(results: dict[str, dict[str, np.ndarray]], baseline: dict[str, np.ndarray],
                      groups: list[str]) -> None:
    """A table of each ranker's Hits@1, Hits@10 and MRR and its paired difference from
    `baseline`, with standard errors clustered by `groups` (the puzzles' answers)."""
    print("| ranker | Hits@1 | Hits@10 | MRR | Hits@1 diff (± SE) | Hits@10 diff (± SE) | MRR diff (± SE) |")
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        diffs = [f"{(r[m] - baseline[m]).mean():+.3f} ± {clustered_se(r[m] - baseline[m], groups):.3f}"
                 for m in ("hits@1", "hits@10", "mrr")]
        print(f"| {name} | {r['hits@1'].mean():.3f} | {r['hits@10'].mean():.3f} | {r['mrr'].mean():.3f} | "
              + " | ".join(diffs) + " |")


if __name__ == "__main__":
    main()
