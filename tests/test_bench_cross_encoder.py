"""The cross-encoder bench's ranking arithmetic (bench/cross_encoder.py), without any model: a
wrong re-ordering or blend would report a second stage as better or worse than it is."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import cross_encoder as bench  # noqa: E402  (bench/ is not a package)

from pictorank.query import Query  # noqa: E402


def order_of(scores: np.ndarray) -> list[int]:
    return list(np.argsort(-scores, kind="stable"))


def test_rerank_top_reorders_only_the_first_k() -> None:
    first = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    second = np.array([0.0, 1.0, 2.0, 9.0, 8.0])  # would put options 3 and 4 first if it ruled alone
    assert order_of(bench.rerank_top(first, second, 3)) == [2, 1, 0, 3, 4]


def test_rerank_top_of_one_keeps_the_first_stage() -> None:
    first = np.array([1.0, 3.0, 2.0])
    assert order_of(bench.rerank_top(first, np.array([9.0, 0.0, 5.0]), 1)) == order_of(first)


def test_answer_rank_breaks_ties_by_option_order() -> None:
    query = Query(hints=("sun",), options=("a", "b", "c"), answer="b")
    assert bench.answer_rank(np.array([1.0, 1.0, 0.0]), query) == 1
    assert bench.answer_rank(np.array([0.0, 1.0, 1.0]), query) == 0


def test_answer_below_ten_counts_as_absent() -> None:
    options = tuple(f"o{i}" for i in range(12))
    query = Query(hints=("sun",), options=options, answer="o10")
    metrics = bench.per_puzzle([-np.arange(12.0)], [query])  # the answer is 11th
    assert metrics["hits@1"][0] == 0.0 and metrics["mrr"][0] == 0.0
    assert metrics["score"][0] == 0.0


def test_blend_weight_zero_is_the_first_stage() -> None:
    first, second = np.array([3.0, 1.0, 2.0]), np.array([0.0, 5.0, 1.0])
    assert order_of(bench.blend(first, second, 0.0)) == order_of(first)
    assert order_of(bench.blend(first, second, 100.0)) == order_of(second)


def test_clue_text_keeps_the_hint_order() -> None:
    assert bench.clue_text(Query(hints=("sun", "flower"), options=("x",))) == "sun, flower"
