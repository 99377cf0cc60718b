"""RankingService's dynamic batching (issue 11): calls that arrive while a ranking runs are ranked
together next, each gets its own answer, and one call's error stays its own. A stub ranker, no model."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from pictorank.api.service import Clue, RankingService
from pictorank.puzzles import HintVocabulary
from pictorank.ranker import Ranker


class SlowLengthRanker(Ranker):
    """Longest option first; records the size of every batch it is given; the first call is slow,
    so the others queue behind it. An option 'boom' raises."""

    method = "stub"

    def __init__(self) -> None:
        self.batches: list[int] = []

    def encoders(self):
        return []

    def score(self, queries):
        self.batches.append(len(queries))
        if len(self.batches) == 1:
            time.sleep(0.3)
        if any("boom" in q.options for q in queries):
            raise ValueError("boom")
        return [np.array([float(len(o)) for o in q.options]) for q in queries]


@pytest.fixture
def service() -> RankingService:
    return RankingService(SlowLengthRanker(), HintVocabulary({1: "sun"}), index=None, encoders=None, model_name="stub")


def _call_in_threads(service: RankingService, clue_lists: list[list[Clue]]) -> list[object]:
    results: list[object] = [None] * len(clue_lists)

    def call(i: int) -> None:
        try:
            results[i] = service.rank(clue_lists[i])
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            results[i] = exc

    first = threading.Thread(target=call, args=(0,))
    first.start()
    time.sleep(0.05)  # the first call is ranking (slowly) when the others arrive
    others = [threading.Thread(target=call, args=(i,)) for i in range(1, len(clue_lists))]
    for thread in others:
        thread.start()
    for thread in (first, *others):
        thread.join(10)
    return results


def test_waiting_calls_are_ranked_together_and_each_gets_its_own_answer(service):
    clue_lists = [[Clue(("sun",), ("a" * (i + 1), "bb", "c"))] for i in range(5)]
    results = _call_in_threads(service, clue_lists)
    assert service.ranker.batches == [1, 4]  # the first alone, the four that waited in one batch
    for i, result in enumerate(results):
        assert result[0].options[0] == max(("a" * (i + 1), "bb", "c"), key=len)


def test_one_calls_error_stays_its_own(service):
    clue_lists = [[Clue(("sun",), ("x", "yy"))], [Clue(("sun",), ("boom", "b"))], [Clue(("sun",), ("ccc", "d"))]]
    results = _call_in_threads(service, clue_lists)
    assert isinstance(results[1], ValueError)
    assert results[0][0].options == ["yy", "x"] and results[2][0].options == ["ccc", "d"]


def test_a_call_alone_is_ranked_at_once(service):
    started = time.perf_counter()
    [ranked] = service.rank([Clue(("sun",), ("aa", "b"))])
    assert ranked.options == ["aa", "b"] and service.ranker.batches == [1]
    assert time.perf_counter() - started < 1.0
