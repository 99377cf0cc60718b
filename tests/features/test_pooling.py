"""Learned position-weighted pooling: the weights, and the pooled cosine without forming the sum."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.features.pooling import expand_weights, fit_position_weights, learned_weights, pooled_cosines
from pictorank.puzzles import to_queries
from pictorank.query import Query


def test_expand_weights_reuses_the_last_weight():
    assert expand_weights([0.5, 1.0], 4).tolist() == [0.5, 1.0, 1.0, 1.0]


def test_learned_weights_share_the_last_bucket_and_default_to_equal():
    weights = {2: [1.0, 0.5], 4: [1.0, 0.25, 0.5, 0.75]}
    assert learned_weights(weights, 6).tolist() == [1.0, 0.25, 0.5, 0.75, 0.75, 0.75]
    assert learned_weights(weights, 3).tolist() == [1.0, 1.0, 1.0]  # no weights for 3 hints


def test_pooled_cosines_equal_the_cosine_to_the_weighted_sum():
    rng = np.random.default_rng(0)
    hints, options = (v / np.linalg.norm(v, axis=1, keepdims=True) for v in (rng.normal(size=(3, 8)), rng.normal(size=(5, 8))))
    w = np.array([1.0, 0.5, 0.25])
    pooled = w @ hints
    expected = options @ pooled / np.linalg.norm(pooled)
    assert pooled_cosines(options @ hints.T, hints @ hints.T, w) == pytest.approx(expected)


def test_position_weights_are_learned_per_clue_length(encoder, vocab, train_puzzles):
    learned = fit_position_weights(to_queries(train_puzzles[:200], vocab), encoder, passes=1)
    assert set(learned) <= {2, 3, 4} and 2 in learned
    for bucket, weights in learned.items():
        assert len(weights) == bucket and max(weights) == 1.0 and min(weights) >= 0


def test_position_weights_follow_the_informative_position(word_encoder):
    """When only the second pictogram tells the options apart (the first is a classifier every
    option shares a word with, and one decoy echoes it), the fit must weigh the second higher."""
    queries = []
    for i in range(12):
        answer, decoy, other = f"blue{i} thing", "generic thing", f"red{i} thing"
        queries.append(Query(("generic", f"blue{i}"), (decoy, answer, other), answer))
    weights = fit_position_weights(queries, word_encoder, passes=2)[2]
    assert weights[1] == 1.0 and weights[0] < weights[1]
