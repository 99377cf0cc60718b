"""Should open play read a word's dictionary definition? Measured on train folds only.

    .venv/bin/python bench/open_vocab_glosses.py --model DIR [--cache DIR] [--glosses FILE.npy]

A clue is a definition in pictures; WordNet's gloss of a word is the same definition in words
(pictorank.lexicon.glosses). This bench embeds each lexicon word's gloss with the base encoder
and measures, on the rows open play's ranker learns from (pictorank.train.open_play: each train
clue whose answer is in the lexicon, retrieved and scored by a fold encoder and tables that never
saw its answer), each clue scored by a ranker fitted on the other folds:

- retrieval by the word's cosine in the served space (today), or by that cosine plus its gloss's
  cosine in the base space (`search_glosses`): the retrieval ceiling of each;
- open play's ranker over today's columns, or with the gloss columns (pictorank.features.gloss)
  as well, on each retrieval's candidates.

Every row's difference from today's recipe is printed with its standard error, clustered by
answer. `--weights W ...` instead prints only the retrieval ceiling, out of fold, with the gloss
cosine weighted W against the word's (1 is the served sum), each weight's difference from 1;
`--priors P ...` adds P times the word's Zipf frequency to what retrieval sorts by (0 is
served), for every weight. `--cache` names the fine-tuning cache of the run that made DIR (its
fold encoders are read back); `--glosses` keeps the gloss vectors for the next run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

# bench/ is the script's folder, on sys.path
from open_vocab_ranker import held_out, metrics, ranks_of, training_setup
from open_vocab_retrieval import clustered_se
from pictorank.encoders import Encoder, StoredVectors
from pictorank.features.gloss import GLOSS_COLUMNS
from pictorank.features.word import WORD_COLUMNS
from pictorank.lexicon import Lexicon, guess_key, matches, playable, without_qualifier
from pictorank.lexicon import store as lexicon_store
from pictorank.query import Query, joined_text
from pictorank.train.config import TrainConfig
from pictorank.train.oof import answer_folds, as_served, finetuned_encoder
from pictorank.train.open_play import DEFAULT_CANDIDATES, nearest, open_play_tables


def print_ceilings(train: list[Query], lexicon: Lexicon, base: Encoder, config: TrainConfig,
                   glosses: StoredVectors, weights: list[float], log: Callable[[str], None],
                   priors: Sequence[float] = (0.0,)) -> None:
    """The share of train clues whose answer is among the 100 playable words found by the word's
    cosine plus each weight times its gloss's, plus each prior times its Zipf frequency (a last
    coordinate of the word's vector, the prior the clue's), each fold in its fold encoder's space."""
    keys = {guess_key(w) for w in lexicon.words}
    folds = answer_folds(train, config.folds, config.seed)
    gloss_vectors = np.hstack([lexicon_store.gloss_search_vectors(lexicon.words, glosses, base),
                               lexicon.zipf.astype(np.float32)[:, None]])
    found: dict[tuple[float, float], list[float]] = {(w, p): [] for w in weights for p in priors}
    groups = []
    for k in range(config.folds):
        inside = [q for q, f in zip(train, folds) if f != k]
        held = [q for q, f in zip(train, folds) if f == k and without_qualifier(q.answer or "").casefold() in keys]
        space = finetuned_encoder(inside, config.oof_epochs, config, base.cache_dir, log)[1]
        vectors = lexicon_store.embed(lexicon, {"space": space}, "space").search_vectors()
        texts = [joined_text(q.hints) for q in held]
        clues, base_clues = space.encode(texts), base.encode(texts)
        for w, p in found:
            nearest_words = nearest(np.hstack([vectors, gloss_vectors]),
                                    np.hstack([clues, w * base_clues, np.full((len(held), 1), p, np.float32)]),
                                    lexicon.words, DEFAULT_CANDIDATES + 20 + DEFAULT_CANDIDATES // 2)
            found[(w, p)] += [float(any(matches(o, q.answer or "") for o in playable(q.hints, words)[:DEFAULT_CANDIDATES]))
                         for q, words in zip(held, nearest_words)]
        groups += [guess_key(q.answer or "") for q in held]
    served = np.array(found[(1.0, 0.0)])
    print(f"| gloss weight | frequency prior | ceiling ({len(groups)} train clues) | diff from served (± SE) |\n"
          "|---|---|---|---|")
    for (w, p), values in found.items():
        diff = np.array(values) - served
        print(f"| {w} | {p} | {np.mean(values):.3f} | {diff.mean():+.3f} ± {clustered_se(diff, groups):.3f} |")


def gloss_vectors(lexicon: Lexicon, base: Encoder, keep: Path | None) -> StoredVectors:
    """The lexicon's gloss vectors in the base space, read from `keep` (.npy) when an earlier run
    saved them there, else embedded (and saved there)."""
    if keep is not None and keep.exists():
        return StoredVectors.quantize(lexicon.words, np.load(keep))
    glosses = lexicon_store.embed_glosses(lexicon, base)
    if keep is not None:
        np.save(keep, glosses.all())
    return glosses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None, help="fine-tuning cache of the run that trained DIR")
    parser.add_argument("--glosses", type=Path, default=None, help="keep the gloss vectors here between runs (.npy)")
    parser.add_argument("--weights", type=float, nargs="*", default=None,
                        help="only the ceilings, the gloss cosine weighted by each of these")
    parser.add_argument("--priors", type=float, nargs="*", default=[],
                        help="with --weights: the Zipf frequency's weight in retrieval, each of these")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    config, train, lexicon, encoder, learned = training_setup(args.model, args.cache)
    base = as_served(encoder, config)
    started = time.perf_counter()
    glosses = gloss_vectors(lexicon, base, args.glosses)
    print(f"gloss vectors: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    if args.weights is not None:
        print_ceilings(train, lexicon, base, config, glosses, [1.0, *(w for w in args.weights if w != 1.0)], log,
                       [0.0, *(p for p in args.priors if p != 0.0)])
        return
    tables = {way: open_play_tables(train, lexicon, base, config, log, glosses=glosses, search_glosses=way == "gloss")
              for way in ("word", "gloss")}
    zipf = lexicon.frequencies()
    today = [*learned.feature_names, *WORD_COLUMNS]
    results = {}
    for way, table in tables.items():
        print(f"retrieval by {way}: ceiling {table.found.mean():.3f} over {len(table.queries)} clues", file=sys.stderr)
        for label, columns in {"today's columns": today, "+ gloss columns": [*today, *GLOSS_COLUMNS]}.items():
            scores, chosen = held_out(table, columns, config)
            ranks = ranks_of(scores, table, zipf, 0.0)
            found = table.found.astype(float)
            results[f"retrieval by {way}, {label} ({chosen})"] = {**metrics(ranks), "ceiling": found}
    groups = [guess_key(q.answer or "") for q in tables["word"].queries]
    assert groups == [guess_key(q.answer or "") for q in tables["gloss"].queries]
    baseline = next(iter(results.values()))
    print(f"## {len(groups)} train clues with their answer in the lexicon of {len(lexicon):,} words\n")
    print("| retrieval, ranker | ceiling | Hits@1 | Hits@10 | MRR | ceiling diff (± SE) | Hits@1 diff (± SE) "
          "| Hits@10 diff (± SE) | MRR diff (± SE) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        diffs = [f"{(r[m] - baseline[m]).mean():+.3f} ± {clustered_se(r[m] - baseline[m], groups):.3f}"
                 for m in ("ceiling", "hits@1", "hits@10", "mrr")]
        print(f"| {name} | {r['ceiling'].mean():.3f} | {r['hits@1'].mean():.3f} | {r['hits@10'].mean():.3f} | "
              f"{r['mrr'].mean():.3f} | " + " | ".join(diffs) + " |")


if __name__ == "__main__":
    main()
