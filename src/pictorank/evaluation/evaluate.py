"""Scores rankings of puzzles with known answers: overall and per subtask."""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from pictorank.evaluation.metrics import METRICS, answer_rank
from pictorank.puzzles import Puzzle


def summarise(ranks: Sequence[int | None]) -> dict[str, float]:
    """Mean of every metric over puzzles, from the answers' 0-based ranks."""
    n = len(ranks)
    summary = {name: sum(metric(r) for r in ranks) / n if n else 0.0 for name, metric in METRICS.items()}
    summary["rows"] = n
    return summary


def evaluate_rankings(puzzles: Sequence[Puzzle], rankings: Sequence[Sequence[str]]) -> dict:
    """Metrics of `rankings` (one full ranked option list per puzzle) against the answers.

    The rankings are scored in full, so MRR counts answers past position 10; the task's
    score, Hits@10 and NDCG@10 only look at the top 10 anyway.
    """
    if any(p.answer is None for p in puzzles):
        raise ValueError("evaluation needs an answer for every puzzle (train/val files)")
    ranks = [answer_rank(r, p.answer) for p, r in zip(puzzles, rankings)]
    by_subtask: dict[int, list[int | None]] = defaultdict(list)
    for puzzle, rank in zip(puzzles, ranks):
        by_subtask[puzzle.subtask_id].append(rank)
    return {
        "overall": summarise(ranks),
        "by_subtask": {str(s): summarise(by_subtask[s]) for s in sorted(by_subtask)},
        "ranks": ranks,
    }


def format_table(results: dict[str, dict]) -> str:
    """A plain-text table of several methods' evaluations, overall and per subtask."""
    names = ["score", "hits@10", "ndcg@10", "hits@1", "mrr"]
    width = max([22, *(len(method) for method in results)])  # a long name widens the column, never shifts a row
    header = f"{'method':<{width}} {'subset':<10} {'rows':>5} " + " ".join(f"{n:>8}" for n in names)
    lines = [header, "-" * len(header)]
    for method, result in results.items():
        subsets = [("all", result["overall"])] + [(f"subtask {s}", m) for s, m in result["by_subtask"].items()]
        for label, metrics in subsets:
            values = " ".join(f"{metrics[n]:>8.4f}" for n in names)
            lines.append(f"{method:<{width}} {label:<10} {metrics['rows']:>5} {values}")
    return "\n".join(lines)
