"""Transfer: how the learned ranker does on vocabularies it never saw, beside seed and cosine.

    .venv/bin/python bench/transfer.py                         # models/default + two retrainings
    .venv/bin/python bench/transfer.py --model models/exp-x    # another Bliss-trained model
    .venv/bin/python bench/transfer.py --work /tmp/transfer    # where split files and models go
    .venv/bin/python bench/transfer.py --skip-retraining --served-draws 5   # + the served spread

One table, five settings, each with seed, cosine (base encoder, joined text), fine-tuned cosine
(joined text through the learned model's own fine-tuned encoder) and the learned model; score,
Hits@10, Hits@1, MRR; then, per setting, the learned model against plain cosine puzzle by puzzle
(first places only one of them got, with an exact McNemar p-value, and the Hits@1 and score
differences with 95% bootstrap intervals: `pictorank.evaluation.significance`):

- bliss val: the bundled val set ranked by `--model` (trained on Bliss train; no choice of a
  model made by `pictorank train` reads val);
- bliss val, held-out pictograms: a seeded tenth of the pictograms used in train is held out;
  a model is trained (`pictorank train`'s procedure, fine-tuning included) on the train puzzles
  that use none of them (every choice on its train folds), and ranks the val puzzles that use at
  least one (descriptions it never saw, in a familiar vocabulary);
- elco dev, zero-shot: data/elco/elco_dev.csv (emoji names -> adjective-noun phrases) ranked by
  `--model`, which never saw it;
- elco, trained in-domain: the ELCo dev half split by answer phrase (60/20/20 %, seeded) into
  train/val/test files, `pictorank train` run on train/val, the test split ranked: the method,
  not the Bliss model, on a new vocabulary with a small training set;
- emoji, emoji names (zero-shot): the hand-written sets tests/data/emoji (44 puzzles, everyday
  words) and tests/data/emoji_names (120 puzzles whose answers are names and phrases).

With `--served-draws N`, the zero-shot sets are also ranked as a server meets them, N times: a
fresh model with in-memory vectors only, one request at a time, in a shuffled order. The int8 base
encoder quantises activations per batch, so a string's vector depends on the request it came in
(and, above, on the whole set it was first encoded with, kept by the disk cache); the second table
gives the mean and spread over the draws of the learned model and of plain cosine as served (the
int8 base encoder's cosine, the one the learned model blends towards), beside plain cosine above.

Fine-tuned encoders are cached under $PICTORANK_CACHE_DIR/finetuned, so a second run retrains
only LightGBM. Training logs go to stderr; the table to stdout.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from pictorank.settings import use_offline_environment
from pictorank.encoders import Encoder
from pictorank.evaluation import evaluate_rankings
from pictorank.evaluation.significance import compare_paired, format_comparisons
from pictorank.puzzles import HintVocabulary, Puzzle, load_hints, load_puzzles, to_queries
from pictorank.ranker import CosineRanker, LearnedRanker, Ranker, SeedRanker, load_ranker
from pictorank.train import TrainConfig, train_command
from harness import ELCO_SEED, ELCO_SHARES, split_by_answer  # bench/harness.py, beside this file

use_offline_environment()

ROOT = Path(__file__).resolve().parents[1]
BLISS = ROOT / "data" / "bliss"
ELCO = ROOT / "data" / "elco"
EMOJI_SETS = {"emoji": ROOT / "tests" / "data" / "emoji", "emoji names": ROOT / "tests" / "data" / "emoji_names"}
METRICS = ("score", "hits@10", "hits@1", "mrr")


def held_out_pictograms(train: Sequence[Puzzle], fraction: float, seed: int) -> set[int]:
    """A seeded `fraction` of the pictograms used in train."""
    used = sorted({h for p in train for h in p.hints})
    return set(random.Random(seed).sample(used, int(len(used) * fraction)))


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def write_rows(path: Path, fields: Sequence[str], rows: Sequence[dict[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(rows)
    return path


def methods(model: LearnedRanker, encoder: Encoder) -> dict[str, Ranker]:
    """The four rankers compared in every setting (fine-tuned cosine reads the model's encoder)."""
    rankers: dict[str, Ranker] = {"seed": SeedRanker(encoder), "cosine": CosineRanker(encoder)}
    if model.extractor.finetuned_encoder is not None:
        rankers["fine-tuned cosine"] = CosineRanker(model.extractor.finetuned_encoder)
    rankers["learned"] = model
    return rankers


def measure(puzzles: Sequence[Puzzle], vocab, model: LearnedRanker, encoder: Encoder) -> dict[str, dict]:
    """Per method, evaluate_rankings' result: the means ('overall') and each puzzle's answer rank."""
    queries = to_queries(puzzles, vocab)
    return {name: evaluate_rankings(puzzles, [x.options for x in r.rank(queries)])
            for name, r in methods(model, encoder).items()}


def train(out: Path, train_csv: Path, val_csv: Path, hints: Path, encoder: Encoder, log) -> LearnedRanker:
    """`pictorank train`'s procedure (train_command) into `out`, then the model loaded from there."""
    started = time.perf_counter()
    train_command(train_csv, val_csv, hints, out, TrainConfig(), encoder, log, force=True)
    log(f"trained {out} in {time.perf_counter() - started:.0f} s")
    ranker = load_ranker(out, encoder=encoder)
    assert isinstance(ranker, LearnedRanker)
    return ranker


def served_draws(model_dir: Path, sets: dict[str, tuple[list[Puzzle], HintVocabulary]], draws: int,
                 seed: int) -> dict[str, dict[str, list[dict[str, float]]]]:
    """Each set ranked `draws` times as a server would rank it (see the module docstring): per set,
    per method ('learned', 'served cosine'), one metrics dict per draw."""
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    for draw in range(draws):
        model = load_ranker(model_dir, encoder=Encoder(cache_dir=None))  # nothing from the disk cache
        assert isinstance(model, LearnedRanker)
        rankers: dict[str, Ranker] = {"learned": model, "served cosine": CosineRanker(model.encoder)}
        for name, (puzzles, vocab) in sets.items():
            queries = to_queries(puzzles, vocab)
            order = list(range(len(queries)))
            random.Random(seed + draw).shuffle(order)
            for method, ranker in rankers.items():  # cosine reads the vectors the learned model's requests made
                rankings: list[list[str]] = [[] for _ in queries]
                for i in order:
                    rankings[i] = ranker.rank([queries[i]])[0].options
                results.setdefault(name, {}).setdefault(method, []).append(evaluate_rankings(puzzles, rankings)["overall"])
    return results


def spread_table(results: dict[str, dict[str, list[dict[str, float]]]]) -> str:
    """Mean and standard deviation over the draws of score and Hits@1."""
    header = f"{'setting':<34} {'method':<18} {'draws':>5} {'score':>16} {'hits@1':>16}"
    lines = [header, "-" * len(header)]
    for setting, by_method in results.items():
        for method, runs in by_method.items():
            cells = [f"{np.mean([r[k] for r in runs]):.4f} ± {np.std([r[k] for r in runs]):.4f}" for k in ("score", "hits@1")]
            lines.append(f"{setting:<34} {method:<18} {len(runs):>5} " + " ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


def table(results: dict[str, dict[str, dict]]) -> str:
    header = f"{'setting':<34} {'method':<18} {'rows':>5} " + " ".join(f"{m:>8}" for m in METRICS)
    lines = [header, "-" * len(header)]
    for setting, by_method in results.items():
        for method, result in by_method.items():
            m = result["overall"]
            lines.append(f"{setting:<34} {method:<18} {int(m['rows']):>5} " + " ".join(f"{m[k]:>8.4f}" for k in METRICS))
    return "\n".join(lines)


def paired_table(results: dict[str, dict[str, dict]]) -> str:
    """Per setting, the learned model against cosine on the same puzzles: is the gap chance?"""
    comparisons = [compare_paired(setting, by_method["learned"]["ranks"], "cosine", by_method["cosine"]["ranks"])
                   for setting, by_method in results.items()]
    return format_comparisons(comparisons, label="setting")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=ROOT / "models" / "default", help="a model trained on Bliss")
    parser.add_argument("--work", type=Path, default=Path("/tmp/pictorank-transfer"), help="split files and retrained models")
    parser.add_argument("--holdout-fraction", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=ELCO_SEED)
    parser.add_argument("--skip-retraining", action="store_true", help="only the settings that use --model")
    parser.add_argument("--served-draws", type=int, default=0, help="rank the zero-shot sets this many times as served")
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    cache = Path(os.environ.get("PICTORANK_CACHE_DIR", ROOT / ".cache" / "embeddings"))
    encoder = Encoder(cache_dir=cache)
    results: dict[str, dict[str, dict]] = {}

    model = load_ranker(args.model, encoder=encoder)
    if not isinstance(model, LearnedRanker):
        parser.error(f"{args.model} is not a learned model")
    bliss_vocab = load_hints(BLISS / "hint_descriptions.csv")
    val = load_puzzles(BLISS / "val.csv", bliss_vocab)
    results["bliss val"] = measure(val, bliss_vocab, model, encoder)

    if not args.skip_retraining:
        fields, train_rows = read_rows(BLISS / "train.csv")
        _, val_rows = read_rows(BLISS / "val.csv")
        train_p = load_puzzles(BLISS / "train.csv", bliss_vocab)
        held = held_out_pictograms(train_p, args.holdout_fraction, args.seed)
        uses = lambda row: bool(held & {int(h) for h in row["hints"].split("|")})  # noqa: E731
        work = args.work / "bliss-heldout"
        keep_train = write_rows(work / "train.csv", fields, [r for r in train_rows if not uses(r)])
        keep_val = write_rows(work / "val.csv", fields, [r for r in val_rows if not uses(r)])
        out_val = write_rows(work / "test.csv", fields, [r for r in val_rows if uses(r)])
        log(f"held-out pictograms: {len(held)}; train {sum(not uses(r) for r in train_rows)} rows, "
            f"held-out report {sum(not uses(r) for r in val_rows)}, measured on {sum(uses(r) for r in val_rows)}")
        heldout = train(work / "model", keep_train, keep_val, BLISS / "hint_descriptions.csv", encoder, log)
        results["bliss val, held-out pictograms"] = measure(load_puzzles(out_val, bliss_vocab), bliss_vocab, heldout, encoder)

    elco_vocab = load_hints(ELCO / "hint_descriptions.csv")
    zero_shot = {"elco dev, zero-shot": (load_puzzles(ELCO / "elco_dev.csv", elco_vocab), elco_vocab)}
    results["elco dev, zero-shot"] = measure(*zero_shot["elco dev, zero-shot"], model, encoder)

    if not args.skip_retraining:
        fields, rows = read_rows(ELCO / "elco_dev.csv")
        work = args.work / "elco"
        parts = split_by_answer(rows, lambda row: row["answer"], ELCO_SHARES, args.seed)
        paths = [write_rows(work / f"{name}.csv", fields, part) for name, part in zip(("train", "val", "test"), parts)]
        log(f"elco split by answer: train {len(parts[0])}, val {len(parts[1])}, test {len(parts[2])} rows")
        elco_model = train(work / "model", paths[0], paths[1], ELCO / "hint_descriptions.csv", encoder, log)
        results["elco, trained in-domain (test)"] = measure(load_puzzles(paths[2], elco_vocab), elco_vocab, elco_model, encoder)

    for name, folder in EMOJI_SETS.items():
        vocab = load_hints(folder / "hint_descriptions.csv")
        zero_shot[f"{name}, zero-shot"] = (load_puzzles(folder / "puzzles.csv", vocab), vocab)
        results[f"{name}, zero-shot"] = measure(*zero_shot[f"{name}, zero-shot"], model, encoder)
    for ranker_encoder in {id(e): e for e in [encoder, *model.encoders()]}.values():
        ranker_encoder.flush()

    print(f"model: {args.model}\n")
    print(table(results))
    print("\nthe learned model against plain cosine, puzzle by puzzle (exact McNemar test on first places, "
          "bootstrap intervals of the Hits@1 and score differences)\n")
    print(paired_table(results))
    if args.served_draws > 0:
        print(f"\nserved: {args.served_draws} draws, one request at a time in a shuffled order, fresh in-memory vectors\n")
        print(spread_table(served_draws(args.model, zero_shot, args.served_draws, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
