"""Should open play's ranker also learn from clues whose descriptions it does not know? Train folds only.

    .venv/bin/python bench/open_vocab_unfamiliar.py --model DIR --cache DIR --tables FILE [--hidden 1.0]

A free-text clue ("cold", "white", "falling") or a clue of another pictogram vocabulary has
descriptions no train clue used, while every row open play's ranker learns from has known ones.
The learned ranker learns from such rows too (pictorank.train.oof.unfamiliar_features); this
bench asks whether open play's should. `--tables` is the file `bench/open_vocab_ranker.py
--tables` kept (the rows as `pictorank train` builds them); each fold's clues are scored again
by the same fold extractor made to forget every description (`FeatureExtractor.forgetting`), or
a seeded share of them (`--hidden`), the "far" rows. A ranker fitted on the home rows, and one
fitted on home and far rows, both on the other folds (the model's LightGBM setting and trees, a
bag of 3), rank each held-out clue's home rows and its far rows, blended as served. Differences
clustered by answer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from open_vocab_retrieval import clustered_se  # bench/ is the script's folder, on sys.path
from pictorank.api.settings import Settings
from pictorank.encoders import Encoder
from pictorank.features import FeatureExtractor
from pictorank.features.word import WORD_COLUMNS, word_columns
from pictorank.lexicon import guess_key, matches
from pictorank.lexicon.words import default_lexicon
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.ranker import load_ranker
from pictorank.ranker.fallback import COSINE_COLUMN, KNOWN_COLUMN, blend_rows
from pictorank.train.config import TrainConfig
from pictorank.train.lambdamart import _ranker
from pictorank.train.oof import answer_folds, finetuned_encoder
from pictorank.train.oof import as_served
from pictorank.train.open_play import OpenPlayTables

SEEDS = 3


def far_rows(tables: OpenPlayTables, train, encoder: Encoder, config: TrainConfig, share: float) -> pd.DataFrame:
    """Every clue's rows again, from its fold's extractor made to forget a seeded `share` of the
    descriptions (1: every one)."""
    base, zipf = as_served(encoder, config), default_lexicon().frequencies()
    folds = answer_folds(train, config.folds, config.seed)
    parts = []
    for k in range(config.folds):
        started = time.perf_counter()
        inside = [q for q, f in zip(train, folds) if f != k]
        ft = finetuned_encoder(inside, config.oof_epochs, config, encoder.cache_dir, lambda m: None)[1]
        extractor = FeatureExtractor(base, ft).fit(inside)
        rows = [q for q, f in zip(tables.queries, tables.folds) if f == k]
        descriptions = sorted({h for q in inside for h in q.hints})
        hidden = random.Random(config.seed + k).sample(descriptions, int(len(descriptions) * share))
        table = extractor.forgetting(hidden).transform(rows)
        extra = [word_columns(q.options, zipf) for q in rows]
        for name in WORD_COLUMNS:
            table[name] = np.concatenate([e[name] for e in extra]).astype(np.float32)
        parts.append(table)
        print(f"far rows of fold {k + 1}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return pd.concat(parts, ignore_index=True)


def places(scores: np.ndarray, X: pd.DataFrame, tables: OpenPlayTables) -> dict[str, np.ndarray]:
    """Hits@1 and Hits@10 of each clue ranked by `scores`, blended towards cosine as served."""
    bounds = np.cumsum([0, *tables.sizes])
    rows = blend_rows([scores[bounds[i] : bounds[i + 1]] for i in range(len(tables.sizes))],
                      X[COSINE_COLUMN].to_numpy(), X[KNOWN_COLUMN].to_numpy())
    ranks = []
    for row, query in zip(rows, tables.queries):
        order = np.argsort(-row, kind="stable")
        ranks.append(next((r for r, i in enumerate(order) if matches(query.options[i], query.answer or "")), None))
    return {"hits@1": np.array([r is not None and r < 1 for r in ranks], float),
            "hits@10": np.array([r is not None and r < 10 for r in ranks], float)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True, help="fine-tuning cache of the run that trained DIR")
    parser.add_argument("--tables", type=Path, required=True, help="the rows bench/open_vocab_ranker.py kept")
    parser.add_argument("--hidden", type=float, default=1.0, help="share of the descriptions the far rows forget")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    settings = Settings()
    metadata = json.loads((args.model / "metadata.json").read_text())
    config = TrainConfig.from_dict(metadata["config"])
    params = json.loads((args.model / "open_play" / "metadata.json").read_text())
    setting, trees = params["lgbm_params"], params["trees"][0]
    vocab = load_hints(settings.data_dir / "hint_descriptions.csv")
    train = to_queries(load_puzzles(settings.data_dir / "train.csv", vocab), vocab)
    encoder = Encoder(cache_dir=args.cache)
    learned = load_ranker(args.model, encoder)
    tables: OpenPlayTables = pd.read_pickle(args.tables)
    far = far_rows(tables, train, encoder, config, args.hidden)
    columns = [*learned.feature_names, *WORD_COLUMNS]
    print(f"## {len(tables.queries)} train clues; known share of the descriptions: home rows "
          f"{tables.X[KNOWN_COLUMN].mean():.2f}, far rows {far[KNOWN_COLUMN].mean():.2f}; "
          f"{setting}, {trees} trees, a bag of {SEEDS}\n")
    results = {}
    for fitted_on in ("home rows", "home and far rows"):
        home_scores, far_scores = np.zeros(len(tables.X)), np.zeros(len(far))
        for k in range(config.folds):
            fit = tables.found & (tables.folds != k)
            rows = np.repeat(fit, tables.sizes)
            X, y, sizes = tables.X.loc[rows, columns], tables.y[rows], tables.sizes[fit]
            if fitted_on == "home and far rows":
                X = pd.concat([X, far.loc[rows, columns]], ignore_index=True)
                y, sizes = np.concatenate([y, y]), np.concatenate([sizes, sizes])
            held = np.repeat(tables.folds == k, tables.sizes)
            for seed in range(config.seed, config.seed + SEEDS):
                model = _ranker(setting, config, trees, len(columns), seed).fit(X, y, group=sizes)
                home_scores[held] += model.predict(tables.X.loc[held, columns]) / SEEDS
                far_scores[held] += model.predict(far.loc[held, columns]) / SEEDS
        results[fitted_on] = {"home": places(home_scores, tables.X, tables), "far": places(far_scores, far, tables)}
    groups = [guess_key(q.answer or "") for q in tables.queries]
    print("| scored on | fitted on home rows: Hits@1 / Hits@10 | fitted on home and far rows | Hits@1 diff (± SE) | Hits@10 diff (± SE) |")
    print("|---|---|---|---|---|")
    for scored in ("home", "far"):
        a, b = results["home rows"][scored], results["home and far rows"][scored]
        diffs = [f"{(b[m] - a[m]).mean():+.3f} ± {clustered_se(b[m] - a[m], groups):.3f}" for m in ("hits@1", "hits@10")]
        print(f"| {scored} rows | {a['hits@1'].mean():.3f} / {a['hits@10'].mean():.3f} | "
              f"{b['hits@1'].mean():.3f} / {b['hits@10'].mean():.3f} | " + " | ".join(diffs) + " |")


if __name__ == "__main__":
    main()
