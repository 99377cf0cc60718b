"""Do explanations agree with their numbers? On val puzzles, every sentence's named reasons against
their contributions, for a learned model directory (or an unlearned method).

    PYTHONPATH=src python bench/explanation_truth.py --model DIR [--puzzles 200]
    PYTHONPATH=src python bench/explanation_truth.py --method cosine

Counts, over the top-10 explanations of the first N val puzzles: sentences, reasons named
("spell it", "closest to X", "train clues ... point to it"), and reasons whose contribution is
not positive. For comparison, how many sentences the earlier rule (spelling named whenever the hint
words spell the option, whatever the spelling group's contribution) would have got wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from pictorank.encoders import Encoder
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.ranker import load_ranker, make_ranker
from pictorank.ranker.explain import _short, spelling_words
from pictorank.settings import CommonSettings, use_offline_environment

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    choice = parser.add_mutually_exclusive_group(required=True)
    choice.add_argument("--model", type=Path)
    choice.add_argument("--method")
    parser.add_argument("--puzzles", type=int, default=200)
    args = parser.parse_args(argv)
    use_offline_environment()
    vocab = load_hints(ROOT / "data/bliss/hint_descriptions.csv")
    queries = to_queries(load_puzzles(ROOT / "data/bliss/val.csv", vocab)[: args.puzzles], vocab)
    encoder = Encoder(cache_dir=CommonSettings().cache_dir)
    ranker = load_ranker(args.model, encoder=encoder) if args.model else make_ranker(args.method, encoder=encoder)
    sentences = named = wrong = earlier_wrong = 0
    for query, ranking in zip(queries, ranker.rank(queries, explain=10)):
        for e in ranking.explanations:
            sentences += 1
            reasons = []
            if "spell it" in e.summary:
                reasons.append(e.groups.get("spelling", 0.0))
            if "train clues" in e.summary:
                reasons.append(e.groups.get("train_clues", 0.0))
            if "closest to '" in e.summary:
                reasons.append(float(np.max(e.pulls)))
                assert f"closest to '{_short(e.hints[int(np.argmax(e.pulls))])}'" in e.summary
            named += len(reasons)
            wrong += sum(value <= 0 for value in reasons)
            spelled = spelling_words(e.option, e.hints)
            if (len(spelled) > 1 or (spelled and spelled[0] != e.option.lower())) and e.groups.get("spelling", 0.0) <= 0:
                earlier_wrong += 1
    print(f"{args.model or args.method}: {len(queries)} val puzzles, {sentences} explanations, {named} reasons named, "
          f"{wrong} of them with a contribution that is not positive; the earlier rule: {earlier_wrong} sentences "
          "naming spelling against a non-positive spelling contribution")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
