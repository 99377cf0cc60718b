"""Ranking metrics for one puzzle at a time; averaging is the caller's business.

`rank` is the answer's 0-based position in the returned list, or None when it is absent.
"""

from __future__ import annotations

import math
from typing import Sequence


def answer_rank(ranking: Sequence[str], answer: str) -> int | None:
    """0-based position of `answer` in `ranking`, None if it is not there."""
    try:
        return list(ranking).index(answer)
    except ValueError:
        return None


def hits_at_k(rank: int | None, k: int) -> float:
    """Hits@k = 1 if rank < k else 0."""
    return 1.0 if rank is not None and rank < k else 0.0


def ndcg_at_k(rank: int | None, k: int = 10) -> float:
    """NDCG@k with one relevant item = 1 / log2(rank + 2) if rank < k else 0 (ideal DCG is 1)."""
    return 1.0 / math.log2(rank + 2) if rank is not None and rank < k else 0.0


def reciprocal_rank(rank: int | None) -> float:
    """RR = 1 / (rank + 1), 0 when the answer is absent; its mean over puzzles is MRR."""
    return 1.0 / (rank + 1) if rank is not None else 0.0


def task_score(rank: int | None) -> float:
    """The task's per-row score = 0.9 * Hits@10 + 0.1 * NDCG@10."""
    return 0.9 * hits_at_k(rank, 10) + 0.1 * ndcg_at_k(rank, 10)


METRICS = {
    "score": task_score,
    "hits@10": lambda rank: hits_at_k(rank, 10),
    "ndcg@10": lambda rank: ndcg_at_k(rank, 10),
    "hits@1": lambda rank: hits_at_k(rank, 1),
    "mrr": reciprocal_rank,
}
