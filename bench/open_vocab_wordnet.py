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

import numpy as np
import pandas as pd

# bench/ is the script's folder, on sys.path
from open_vocab_glosses import gloss_vectors
from open_vocab_ranker import held_out, metrics, print_differences, ranks_of, training_setup
from pictorank.features.gloss import GLOSS_COLUMNS
from pictorank.features.word import WORD_COLUMNS
from pictorank.features.wordnet import WORDNET_COLUMNS, queries_wordnet_columns
from pictorank.lexicon import guess_key
from pictorank.lexicon.facts import default_facts
from pictorank.train.oof import as_served
from pictorank.train.open_play import open_play_tables

GROUPS = {
    "+ senses per part of speech": [c for c in WORDNET_COLUMNS if c[3:] in ("nouns", "verbs", "adjectives", "adverbs")],
    "+ hint words among hypernyms' and gloss's": [c for c in WORDNET_COLUMNS if "_hints" in c or "_first" in c],
    "+ all wn columns": list(WORDNET_COLUMNS),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None, help="fine-tuning cache of the run that trained DIR")
    parser.add_argument("--glosses", type=Path, default=None, help="keep the gloss vectors here between runs (.npy)")
    parser.add_argument("--tables", type=Path, default=None, help="keep the rows here between runs (pickle)")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    config, train, lexicon, encoder, learned = training_setup(args.model, args.cache)
    base = as_served(encoder, config)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    if args.tables is not None and args.tables.exists():
        tables = pd.read_pickle(args.tables)
    else:
        glosses = gloss_vectors(lexicon, base, args.glosses)
        tables = open_play_tables(train, lexicon, base, config, log, glosses=glosses, search_glosses=True)
        if args.tables is not None:
            pd.to_pickle(tables, args.tables)
    for name, values in queries_wordnet_columns(tables.queries, default_facts()).items():
        tables.X[name] = values.astype(np.float32)
    zipf = lexicon.frequencies()
    today = [*learned.feature_names, *WORD_COLUMNS, *GLOSS_COLUMNS]
    results = {}
    for label, extra in {"today's columns": [], **GROUPS}.items():
        started = time.perf_counter()
        scores, chosen = held_out(tables, [*today, *extra], config)
        results[f"{label} ({chosen})"] = metrics(ranks_of(scores, tables, zipf, 0.0))
        log(f"{label}: {time.perf_counter() - started:.0f} s")
    groups = [guess_key(q.answer or "") for q in tables.queries]
    print(f"## {len(groups)} train clues with their answer in the lexicon of {len(lexicon):,} words; "
          f"retrieval ceiling {tables.found.mean():.3f}\n")
    print_differences(results, next(iter(results.values())), groups)

if __name__ == "__main__":
    main()
