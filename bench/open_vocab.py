"""Open-vocabulary mode on val: how often the answer comes first / in the top 10 when the
candidates are the service's whole answer vocabulary rather than the puzzle's options.

    .venv/bin/python bench/open_vocab.py [--model DIR | --method cosine|seed] [--candidates 100]

The service's own code path (RankingService, no HTTP): the faiss index over every option and
answer of train/val/test (the service's default vocabulary) returns `--candidates` words nearest
to the clue, and the ranker orders them. An answer outside those candidates counts as a miss.
The same puzzles ranked among their own options are printed for reference.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from pictorank.api.service import Clue, build_service
from pictorank.api.settings import Settings
from pictorank.errors import PictorankError
from pictorank.evaluation import evaluate_rankings, summarise
from pictorank.evaluation.metrics import answer_rank
from pictorank.puzzles import load_puzzles
from pictorank.ranker import DEFAULT_METHOD, METHODS

COLUMNS = ["hits@1", "hits@10", "mrr", "score"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="model directory to serve (default: --method)")
    parser.add_argument("--method", default=DEFAULT_METHOD, choices=METHODS)
    parser.add_argument("--candidates", type=int, default=100, help="words taken from the index (service default 100)")
    parser.add_argument("--split", default="val")
    args = parser.parse_args()

    settings = Settings(model_dir=args.model, method=args.method, open_vocab_candidates=args.candidates)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    try:
        service = build_service(settings)
    except PictorankError as exc:
        raise SystemExit(f"open_vocab: {exc}") from None
    puzzles = load_puzzles(settings.data_dir / f"{args.split}.csv", service.vocab)
    hints = [tuple(service.describe(p.hints)) for p in puzzles]

    started = time.perf_counter()
    open_rankings = [r.options for r in service.rank([Clue(h) for h in hints])]
    open_seconds = time.perf_counter() - started
    closed_rankings = [r.options for r in service.rank([Clue(h, p.options) for h, p in zip(hints, puzzles)])]

    ranks = [answer_rank(ranking, p.answer) for ranking, p in zip(open_rankings, puzzles)]
    rows = {
        f"open vocabulary ({len(service.index.words)} words)": summarise(ranks),
        "puzzle's own options": evaluate_rankings(puzzles, closed_rankings)["overall"],
    }
    found = sum(r is not None for r in ranks) / len(ranks)
    print(f"## Open-vocabulary mode on {args.split} ({len(puzzles)} puzzles), model: {service.model_name}\n")
    print(f"| candidates | {' | '.join(COLUMNS)} |")
    print(f"|---|{'---|' * len(COLUMNS)}")
    for label, metrics in rows.items():
        print(f"| {label} | " + " | ".join(f"{metrics[c]:.3f}" for c in COLUMNS) + " |")
    print(f"\nanswer among the {args.candidates} words taken from the index: {found:.3f} of puzzles; "
          f"open-vocabulary ranking of all {len(puzzles)} puzzles took {open_seconds:.2f} s")


if __name__ == "__main__":
    main()
