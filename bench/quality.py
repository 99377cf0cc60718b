"""Quality of the learned ranker on val, beside seed and cosine, with ablations and transfer checks.

    .venv/bin/python bench/quality.py                 # ~10-20 min on a fresh cache, minutes when warm
    .venv/bin/python bench/quality.py --no-transfer   # skip the held-out-pictogram retraining

One table on val: seed, cosine (joined text), fine-tuned cosine (joined text through the final
fine-tuned encoder), the learned ranker, and ablations that drop one feature group and refit
LightGBM on the same out-of-fold tables (without fine-tuning: no ``ft_*``/``assoc_ft_*``/``hub_ft_*`` columns; without
lexical: no ``lex_*``; without train associations: no ``assoc_*``/``hub_*``; without the
descriptions' meanings: none of the association columns that look descriptions up in train
clues, i.e. the answer centroids, reverse neighbours and same-pair clues; without familiarity: no
``fam_*``).

Timing columns: "train s" is the wall time of the training stage the row needs (fine-tuning and
OOF features are shared by the learned rows, so ablations show only their LightGBM time, and the
shared part is printed once; fine-tuned encoders found in the cache are reused and say so);
"rows/s" is ranking throughput on val with embeddings already in memory.

Transfer checks: (1) held-out pictograms: a seeded tenth of the pictograms used in train is
removed with every train puzzle that uses one; a ranker trained on the rest (same procedure,
fine-tuning included unless --transfer-no-finetune) ranks the removed puzzles; (2) the emoji
puzzles of tests/data/emoji, an unrelated vocabulary, ranked by the learned model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from pictorank.settings import use_offline_environment
from pictorank.encoders import Encoder
from pictorank.evaluation import evaluate_rankings, format_table
from pictorank.puzzles import Puzzle, load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import CosineRanker, Ranker, SeedRanker
from pictorank.train import TrainConfig, build_tables, fit_ranker_from_tables

use_offline_environment()

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "bliss"
EMOJI = ROOT / "tests" / "data" / "emoji"
ABLATIONS = {
    "learned -finetune": ("ft_", "assoc_ft_", "hub_ft_"),  # every column read through the fine-tuned encoder
    "learned -familiarity": ("fam_",),  # how far the clue and options lie from train (issue 10)
    "learned -lexical": ("lex_",),
    "learned -associations": ("assoc_", "hub_"),
    # only the part of the associations that looks descriptions up by text in train clues
    "learned -meanings": tuple(f"assoc_{p}" for p in ("base_hint_", "ft_hint_", "base_rev_", "ft_rev_", "pair_")),
}


def timed_rank(ranker: Ranker, queries: Sequence[Query]) -> tuple[list[list[str]], float]:
    """Rankings and rows/s; a first pass fills the embedding caches so only ranking is timed."""
    ranker.rank(queries)
    started = time.perf_counter()
    rankings = [r.options for r in ranker.rank(queries)]
    return rankings, len(queries) / (time.perf_counter() - started)


def timing_table(rows: dict[str, tuple[str, float]]) -> str:
    lines = [f"{'method':<22} {'train s':>10} {'rows/s':>10}", "-" * 44]
    lines += [f"{name:<22} {train:>10} {speed:>10.0f}" for name, (train, speed) in rows.items()]
    return "\n".join(lines)


def held_out_pictograms(puzzles: Sequence[Puzzle], fraction: float, seed: int) -> tuple[list[Puzzle], list[Puzzle]]:
    """Split puzzles so that no pictogram of the held-out part appears in the kept part."""
    used = sorted({h for p in puzzles for h in p.hints})
    rng = random.Random(seed)
    held = set(rng.sample(used, int(len(used) * fraction)))
    keep = [p for p in puzzles if not held & set(p.hints)]
    out = [p for p in puzzles if held & set(p.hints)]
    return keep, out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-transfer", action="store_true", help="skip the held-out-pictogram retraining")
    parser.add_argument("--transfer-no-finetune", action="store_true", help="retrain the transfer model without fine-tuning")
    parser.add_argument("--holdout-fraction", type=float, default=0.1)
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731

    cache = Path(os.environ.get("PICTORANK_CACHE_DIR", ROOT / ".cache" / "embeddings"))
    encoder = Encoder(cache_dir=cache)
    vocab = load_hints(DATA / "hint_descriptions.csv")
    train_p, val_p = load_puzzles(DATA / "train.csv", vocab), load_puzzles(DATA / "val.csv", vocab)
    train, val = to_queries(train_p, vocab), to_queries(val_p, vocab)
    config = TrainConfig()

    started = time.perf_counter()
    tables = build_tables(train, encoder, config, log)
    shared = time.perf_counter() - started

    results, timings = {}, {}
    rankers: dict[str, Ranker] = {"seed": SeedRanker(encoder), "cosine": CosineRanker(encoder)}
    if tables.extractor.finetuned_encoder is not None:
        rankers["fine-tuned cosine"] = CosineRanker(tables.extractor.finetuned_encoder)
    for name, ranker in rankers.items():
        rankings, speed = timed_rank(ranker, val)
        results[name], timings[name] = evaluate_rankings(val_p, rankings), ("-", speed)
    learned = None
    # The default recipe leaves the seed template's columns out (issue 11); its row "+seed" puts them back.
    for name, drop in {"learned": (), "learned +seed template": None, **ABLATIONS}.items():
        groups = () if drop is None else config.drop_groups + drop
        ranker = fit_ranker_from_tables(tables, replace(config, drop_groups=groups), log)
        learned = learned or ranker
        rankings, speed = timed_rank(ranker, val)
        results[name] = evaluate_rankings(val_p, rankings)
        timings[name] = (f"{ranker.training['lgbm_seconds']:.0f}", speed)

    print("## val (bundled Bliss), 563 rows\n")
    print(format_table(results))
    print()
    print(timing_table(timings))
    reused = tables.seconds["finetuned_encoders_reused_from_cache"]
    print(f"\nshared by the learned rows: fine-tuning + OOF features + final encoder: {shared:.0f} s "
          f"(OOF {tables.seconds['oof']:.0f} s, final {tables.seconds['final_features']:.0f} s; "
          f"{reused} of {config.folds + config.unfamiliar_groups + 1} fine-tuned encoders reused from the cache)")
    trained = ROOT / "models" / "default" / "metadata.json"
    if trained.is_file():
        meta = json.loads(trained.read_text())
        print(f"models/default (pictorank train): {meta['seconds']['total_training']:.0f} s in total, "
              f"{meta['seconds'].get('finetuned_encoders_reused_from_cache', '?')} fine-tuned encoders reused from the cache")
    print(f"learned position weights (by clue length): {learned.extractor.position_weights_}")

    emoji_vocab = load_hints(EMOJI / "hint_descriptions.csv")
    emoji_p = load_puzzles(EMOJI / "puzzles.csv", emoji_vocab)
    emoji = to_queries(emoji_p, emoji_vocab)
    emoji_results = {
        "cosine": evaluate_rankings(emoji_p, [r.options for r in CosineRanker(encoder).rank(emoji)]),
        "learned": evaluate_rankings(emoji_p, [r.options for r in learned.rank(emoji)]),
    }
    print(f"\n## transfer: emoji vocabulary (tests/data/emoji), {len(emoji_p)} rows, model trained on Bliss train\n")
    print(format_table(emoji_results))

    if not args.no_transfer:
        keep, out = held_out_pictograms(train_p, args.holdout_fraction, config.seed)
        transfer_config = replace(config, finetune=not args.transfer_no_finetune)
        log(f"transfer: training on {len(keep)} train rows, {len(out)} rows use held-out pictograms")
        started = time.perf_counter()
        ranker = fit_ranker_from_tables(
            build_tables(to_queries(keep, vocab), encoder, transfer_config, log), transfer_config, log
        )
        seconds = time.perf_counter() - started
        held = to_queries(out, vocab)
        transfer_results = {
            "cosine": evaluate_rankings(out, [r.options for r in CosineRanker(encoder).rank(held)]),
            "learned": evaluate_rankings(out, [r.options for r in ranker.rank(held)]),
        }
        what = "without" if args.transfer_no_finetune else "with"
        print(f"\n## transfer: {len(out)} train puzzles using {args.holdout_fraction:.0%} held-out pictograms; "
              f"ranker retrained on the other {len(keep)} ({what} fine-tuning, {seconds:.0f} s)\n")
        print(format_table(transfer_results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
