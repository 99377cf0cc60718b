"""The retrieval bench's arithmetic (bench/open_vocab_retrieval.py), without any model: a wrong
nearest-word search or standard error would choose a retrieval recipe on a false difference."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import open_vocab_retrieval as bench  # noqa: E402  (bench/ is not a package)


def test_top_words_are_the_highest_inner_products_best_first() -> None:
    lexicon = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [-1.0, 0.0]])
    queries = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert bench.top_words(lexicon, queries, ["a", "b", "c", "d"], 2) == [["a", "c"], ["b", "c"]]


def test_interleave_takes_each_list_in_turn_and_keeps_first_occurrences() -> None:
    assert bench.interleave([["a", "b", "c"], ["b", "d"], ["e"]]) == ["a", "b", "e", "d", "c"]


def test_clustered_standard_error_counts_an_answer_once_not_per_puzzle() -> None:
    values = np.array([1.0, 1.0, 0.0, 0.0])
    independent = bench.clustered_se(values, ["a", "b", "c", "d"])
    assert independent == pytest.approx(values.std(ddof=1) / 2)  # one puzzle an answer: the usual SE
    # two answers of two puzzles each, alike within an answer: in effect two observations, not four
    assert bench.clustered_se(values, ["a", "a", "c", "c"]) > independent
    assert bench.clustered_se(np.zeros(4), ["a", "a", "c", "c"]) == 0.0


def test_hubness_is_the_mean_cosine_to_the_nearest_clues_other_than_the_words_own() -> None:
    words = ["snow", "ice"]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    clues = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    hub = bench.hubness(vectors, words, clues, ["snow (weather)", "rain", "hail"], k=2)
    assert hub[0] == pytest.approx((0.8 + 0.0) / 2)  # its own clue (answer "snow (weather)") left out
    assert hub[1] == pytest.approx((1.0 + 0.6) / 2)


def test_the_paired_bench_compares_the_same_puzzles_place_by_place(tmp_path, capsys, monkeypatch) -> None:
    import json

    import open_vocab_paired as paired

    before = [{"id": "a/1", "answer": "dog", "place": 0, "retrieved": True},
              {"id": "b/1", "answer": "cat", "place": None, "retrieved": False}]
    after = [{"id": "a/1", "answer": "dog", "place": 12, "retrieved": True},
             {"id": "b/1", "answer": "cat", "place": 3, "retrieved": True}]
    measured = paired.measures(after)
    assert measured["hits@1"].tolist() == [0, 0] and measured["hits@10"].tolist() == [0, 1]
    assert measured["mrr"].tolist() == pytest.approx([1 / 13, 1 / 4]) and measured["ceiling"].tolist() == [1, 1]
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    monkeypatch.setattr(sys, "argv", ["paired", str(tmp_path / "before.json"), str(tmp_path / "after.json")])
    paired.main()
    assert "| ceiling | 0.500 | 1.000 | +0.500 ±" in capsys.readouterr().out
    (tmp_path / "after.json").write_text(json.dumps(after[::-1]))
    with pytest.raises(SystemExit, match="not hold the same puzzles"):
        paired.main()
