"""Should open play read what WordNet says a word is? Measured on train folds only.

    .venv/bin/python bench/open_vocab_wordnet.py --model DIR [--cache DIR] [--glosses FILE.npy] [--tables FILE]

A Bliss clue names its answer's kind first and what sets it apart after, as a dictionary defines
a word. pictorank.features.wordnet turns WordNet's entry for a candidate (pictorank.lexicon.facts)
into columns: its senses per part of speech, and whether the hints' words are among its
hypernyms' words or its gloss's. This bench builds open play's rows as `pictorank train` does
(found by word and gloss, each clue retrieved and scored by a fold encoder and tables that never
saw its answer), adds those columns, and scores each clue by a ranker fitted on the other folds
with today's columns and with each group added; every row's difference from today's is printed
with its standard error, clustered by answer. `--cache` names the fine-tuning cache of the run
that made DIR; `--glosses` and `--tables` keep the gloss vectors and the rows for the next run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# bench/ is the script's folder, on sys.path
from open_vocab_glosses import gloss_vectors
from open_vocab_ranker import held_out, metrics, print_differences, ranks_of, training_setup
from pictorank.features.gloss import GLOSS_COLUMNS
from pictorank.features.word import WORD_COLUMNS
from pictorank.features.wordnet import WORDNET_COLUMNS, queries_wordnet_columns
from pictorank.lexicon import Lexicon, guess_key
from pictorank.lexicon.facts import default_facts
from pictorank.train.config import TrainConfig
from pictorank.train.oof import as_served
from pictorank.train.open_play import OpenPlayTables, open_play_tables

GROUPS = {
    "+ senses per part of speech": [c for c in WORDNET_COLUMNS if c[3:] in ("nouns", "verbs", "adjectives", "adverbs")],
    "+ hint words among hypernyms' and gloss's": [c for c in WORDNET_COLUMNS if "_hints" in c or "_first" in c],
    "+ all wn columns": list(WORDNET_COLUMNS),
}


def arguments(description: str) -> argparse.ArgumentParser:
    """The options of this bench, which bench/open_vocab_ranker_variants.py shares."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None, help="fine-tuning cache of the run that trained DIR")
    parser.add_argument("--glosses", type=Path, default=None, help="keep the gloss vectors here between runs (.npy)")
    parser.add_argument("--tables", type=Path, default=None, help="keep the rows here between runs (pickle)")
    return parser


def shipped_rows(args: argparse.Namespace) -> tuple[TrainConfig, Lexicon, Any, OpenPlayTables]:
    """Open play's rows as `pictorank train` builds them for the model `args.model` (read from
    `args.tables` when an earlier run kept them there), with the wn columns: its config, the
    lexicon, the learned ranker and the rows."""
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    config, train, lexicon, encoder, learned = training_setup(args.model, args.cache)
    if args.tables is not None and args.tables.exists():
        tables = pd.read_pickle(args.tables)
    else:
        base = as_served(encoder, config)
        glosses = gloss_vectors(lexicon, base, args.glosses)
        tables = open_play_tables(train, lexicon, base, config, lambda message: print(message, file=sys.stderr),
                                  glosses=glosses, search_glosses=True)
        if args.tables is not None:
            pd.to_pickle(tables, args.tables)
    for name, values in queries_wordnet_columns(tables.queries, default_facts()).items():
        tables.X[name] = values.astype(np.float32)
    return config, lexicon, learned, tables


def print_table(results: dict[str, dict[str, np.ndarray]], tables: OpenPlayTables, lexicon: Lexicon) -> None:
    """Each ranker's figures and its differences from the first one's, clustered by answer."""
    groups = [guess_key(q.answer or "") for q in tables.queries]
    print(f"## {len(groups)} train clues with their answer in the lexicon of {len(lexicon):,} words; "
          f"retrieval ceiling {tables.found.mean():.3f}\n")
    print_differences(results, next(iter(results.values())), groups)


def main() -> None:
    config, lexicon, learned, tables = shipped_rows(arguments(__doc__.split("\n\n")[0]).parse_args())
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    zipf = lexicon.frequencies()
    today = [*learned.feature_names, *WORD_COLUMNS, *GLOSS_COLUMNS]
    results = {}
    for label, extra in {"today's columns": [], **GROUPS}.items():
        started = time.perf_counter()
        scores, chosen = held_out(tables, [*today, *extra], config)
        results[f"{label} ({chosen})"] = metrics(ranks_of(scores, tables, zipf, 0.0))
        log(f"{label}: {time.perf_counter() - started:.0f} s")
    print_table(results, tables, lexicon)


if __name__ == "__main__":
    main()
