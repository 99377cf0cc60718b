"""The clue model's parts that need no encoder (the fitted model is tested in test_suggester.py)."""

from __future__ import annotations

import warnings

import numpy as np

from pictorank.suggest.model import Clue, Memory


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
