"""The clue model's parts that need no encoder (the fitted model is tested in test_suggester.py)."""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

from pictorank.errors import ModelError
from pictorank.query import Query
from pictorank.suggest.model import Clue, ClueModel, Memory


def test_the_main_idea_probe_learns_many_main_ideas_from_few_words_without_warnings() -> None:
    # A small vocabulary's train clues (63 ELCo phrases) give nearly one main idea per word, which
    # scikit-learn reports as "could be a regression"; the CLI must not print that to users.
    clues = [Clue(f"word {i}", (i % 20, 20)) for i in range(30)]  # 20 main ideas, 30 words
    vectors = np.random.default_rng(0).normal(size=(30, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        memory = Memory(clues, vectors, size=21, probe_c=10.0, neighbours=5, temperature=0.05).fit_probe()
    log_p = memory.probe_log_probability(vectors[:3])
    assert log_p.shape == (3, 21)
    assert list(log_p.argmax(1)) == [0, 1, 2]  # each word's own main idea, learned


class _RandomEncoder:
    """Unit vectors by hashing: enough for a fit to start, and no model to load."""

    model_id = "random-test-encoder"

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        vectors = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=16) for t in texts])
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_too_few_answers_to_learn_from_says_how_many_are_needed() -> None:
    descriptions = ["cat", "dog", "house", "sun"]
    queries = [Query(("cat", "house"), ("a", "b"), answer) for answer in ("kitten", "kennel", "cattery")]
    with pytest.raises(ModelError, match=r"3 clues of 3 different answers; .* at least 10 different answers"):
        ClueModel(_RandomEncoder(), folds=5).fit(queries, descriptions)  # type: ignore[arg-type]
