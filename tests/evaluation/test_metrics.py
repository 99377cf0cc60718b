"""Metrics against hand-computed values and against an independent implementation (trec_eval)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pictorank.puzzles import Puzzle
from pictorank.evaluation.evaluate import evaluate_rankings
from pictorank.evaluation.metrics import answer_rank, hits_at_k, ndcg_at_k, reciprocal_rank, task_score


def test_answer_rank() -> None:
    assert answer_rank(["a", "b", "c"], "a") == 0
    assert answer_rank(("a", "b", "c"), "c") == 2
    assert answer_rank(["a", "b"], "z") is None


@pytest.mark.parametrize(
    ("rank", "k", "expected"),
    [(0, 1, 1.0), (1, 1, 0.0), (9, 10, 1.0), (10, 10, 0.0), (None, 10, 0.0)],
)
def test_hits_at_k(rank: int | None, k: int, expected: float) -> None:
    assert hits_at_k(rank, k) == expected


@pytest.mark.parametrize(
    ("rank", "expected"),
    [(0, 1.0), (1, 0.6309297535714575), (2, 0.5), (9, 0.2890648263178879), (10, 0.0), (None, 0.0)],
)
def test_ndcg_at_10(rank: int | None, expected: float) -> None:
    assert ndcg_at_k(rank, 10) == pytest.approx(expected)


def test_ndcg_cutoff() -> None:
    assert ndcg_at_k(3, k=3) == 0.0
    assert ndcg_at_k(2, k=3) == 0.5


@pytest.mark.parametrize(("rank", "expected"), [(0, 1.0), (1, 0.5), (3, 0.25), (29, 1 / 30), (None, 0.0)])
def test_reciprocal_rank(rank: int | None, expected: float) -> None:
    assert reciprocal_rank(rank) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("rank", "expected"),
    [(0, 1.0), (1, 0.9 + 0.1 / math.log2(3)), (9, 0.9 + 0.1 / math.log2(11)), (10, 0.0), (None, 0.0)],
)
def test_task_score(rank: int | None, expected: float) -> None:
    assert task_score(rank) == pytest.approx(expected)


def random_case(seed: int) -> tuple[list[Puzzle], list[list[str]]]:
    """Puzzles of the three subtask sizes with random rankings, some cut to their top 10."""
    rng = np.random.default_rng(seed)
    puzzles, rankings = [], []
    for i in range(60):
        subtask = 1 + i % 3
        options = tuple(f"w{j}" for j in range((4, 10, 30)[subtask - 1]))
        answer = options[int(rng.integers(len(options)))]
        ranking = [options[j] for j in rng.permutation(len(options))]
        if rng.random() < 0.3:
            ranking = ranking[:10]
        puzzles.append(Puzzle(f"q{i}", subtask, (1,), options, answer))
        rankings.append(ranking)
    return puzzles, rankings


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_trec_eval(seed: int) -> None:
    """Hits@1, Hits@10, NDCG@10 and MRR agree with trec_eval (via ir-measures), which shares no code."""
    import ir_measures
    from ir_measures import RR, Success, nDCG

    puzzles, rankings = random_case(seed)
    qrels = [ir_measures.Qrel(p.datapoint_id, p.answer, 1) for p in puzzles]
    # trec_eval orders by score, so the ranked position becomes a strictly decreasing score.
    run = [
        ir_measures.ScoredDoc(p.datapoint_id, option, float(len(ranking) - position))
        for p, ranking in zip(puzzles, rankings)
        for position, option in enumerate(ranking)
    ]
    theirs = ir_measures.pytrec_eval.calc_aggregate([Success @ 1, Success @ 10, nDCG @ 10, RR], qrels, run)
    ours = evaluate_rankings(puzzles, rankings)["overall"]
    assert ours["hits@1"] == pytest.approx(theirs[Success @ 1])
    assert ours["hits@10"] == pytest.approx(theirs[Success @ 10])
    assert ours["ndcg@10"] == pytest.approx(theirs[nDCG @ 10])
    assert ours["mrr"] == pytest.approx(theirs[RR])
    expected_score = 0.9 * theirs[Success @ 10] + 0.1 * theirs[nDCG @ 10]
    assert ours["score"] == pytest.approx(expected_score)
