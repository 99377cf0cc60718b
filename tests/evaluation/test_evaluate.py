"""evaluate_rankings: per-puzzle ranks, overall and per-subtask means; format_table."""

from __future__ import annotations

import math

import pytest

from pictorank.puzzles import Puzzle
from pictorank.evaluation.evaluate import evaluate_rankings, format_table, summarise

PUZZLES = [
    Puzzle("a", 1, (1,), ("x", "y", "z", "w"), "x"),
    Puzzle("b", 1, (1,), ("x", "y", "z", "w"), "w"),
    Puzzle("c", 3, (1,), tuple(f"o{i}" for i in range(30)), "o11"),
]
RANKINGS = [["x", "y", "z", "w"], ["y", "w", "x", "z"], [f"o{i}" for i in range(30)]]


def test_ranks_and_means() -> None:
    result = evaluate_rankings(PUZZLES, RANKINGS)
    assert result["ranks"] == [0, 1, 11]
    overall = result["overall"]
    assert overall["rows"] == 3
    assert overall["hits@1"] == pytest.approx(1 / 3)
    assert overall["hits@10"] == pytest.approx(2 / 3)
    assert overall["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 12) / 3)
    assert overall["ndcg@10"] == pytest.approx((1 + 1 / math.log2(3)) / 3)
    assert overall["score"] == pytest.approx((1.0 + 0.9 + 0.1 / math.log2(3)) / 3)


def test_by_subtask() -> None:
    by_subtask = evaluate_rankings(PUZZLES, RANKINGS)["by_subtask"]
    assert list(by_subtask) == ["1", "3"]
    assert by_subtask["1"]["rows"] == 2
    assert by_subtask["1"]["mrr"] == pytest.approx(0.75)
    assert by_subtask["3"]["hits@10"] == 0.0
    assert by_subtask["3"]["mrr"] == pytest.approx(1 / 12)


def test_truncated_ranking_counts_as_miss() -> None:
    result = evaluate_rankings(PUZZLES[2:], [RANKINGS[2][:10]])
    assert result["ranks"] == [None]
    assert result["overall"]["mrr"] == 0.0


def test_needs_answers() -> None:
    with pytest.raises(ValueError, match="needs an answer"):
        evaluate_rankings([Puzzle("t", 1, (1,), ("x",), None)], [["x"]])


def test_summarise_empty() -> None:
    assert summarise([]) == {"score": 0.0, "hits@10": 0.0, "ndcg@10": 0.0, "hits@1": 0.0, "mrr": 0.0, "rows": 0}


def test_format_table() -> None:
    result = evaluate_rankings(PUZZLES, RANKINGS)
    table = format_table({"seed": result, "cosine": result}).splitlines()
    assert table[0].split() == ["method", "subset", "rows", "score", "hits@10", "ndcg@10", "hits@1", "mrr"]
    assert len(table) == 2 + 2 * 3  # header, rule, (all + 2 subtasks) per method
    assert table[2].split()[:3] == ["seed", "all", "3"]
    assert table[3].split()[:4] == ["seed", "subtask", "1", "2"]
    assert f"{1 / 3:.4f}" in table[2]
