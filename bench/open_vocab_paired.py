"""Two models' open play on the same puzzles, paired: the differences and their standard errors.

    .venv/bin/python bench/open_vocab_paired.py BEFORE.json AFTER.json

Each file is what `bench/open_vocab.py --ranks-out FILE` wrote for one model: each puzzle's
answer, the answer's place in open play's ranking (null when not among it) and whether it was
retrieved. Prints Hits@1, Hits@10, MRR and the retrieval ceiling of each, and AFTER minus BEFORE
with its standard error, clustered by answer (the puzzles of one answer are not independent).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from pictorank.evaluation.significance import clustered_se
from pictorank.lexicon import guess_key


def measures(rows: list[dict]) -> dict[str, np.ndarray]:
    places = [row["place"] for row in rows]
    return {"hits@1": np.array([p is not None and p < 1 for p in places], float),
            "hits@10": np.array([p is not None and p < 10 for p in places], float),
            "mrr": np.array([1 / (p + 1) if p is not None else 0.0 for p in places]),
            "ceiling": np.array([row["retrieved"] for row in rows], float)}


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1].strip())
    before, after = (json.loads(Path(name).read_text()) for name in sys.argv[1:])
    if [(r["id"], r["answer"]) for r in before] != [(r["id"], r["answer"]) for r in after]:
        raise SystemExit("open_vocab_paired: the two files do not hold the same puzzles in the same order")
    groups = [guess_key(row["answer"]) for row in before]
    a, b = measures(before), measures(after)
    print(f"{len(groups)} puzzles, {len(set(groups))} answers\n")
    print("| measure | before | after | after - before (± SE) |\n|---|---|---|---|")
    for name in a:
        diff = b[name] - a[name]
        print(f"| {name} | {a[name].mean():.3f} | {b[name].mean():.3f} | {diff.mean():+.3f} ± {clustered_se(diff, groups):.3f} |")


if __name__ == "__main__":
    main()
