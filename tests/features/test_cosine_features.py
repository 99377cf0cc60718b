"""Cosine columns: poolings of the clue and each score's place within its row."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.features import cosine
from pictorank.query import Query

QUERY = Query(("flower", "sun", "yellow"), ("sunflower", "yellow flower", "car", "sun"))


def test_each_score_is_ranked_within_its_row(word_encoder):
    cols = cosine.columns("ft", word_encoder, QUERY, {})
    for name in cosine.SCORE_COLUMNS:
        best = int(np.argmax(cols[f"ft_cos_{name}"]))
        assert cols[f"ft_rank_{name}"][best] == 0 and sorted(cols[f"ft_rank_{name}"]) == [0, 1, 2, 3]
        assert cols[f"ft_gap_{name}"][best] == 0 and cols[f"ft_gap_{name}"].max() == 0
        assert cols[f"ft_z_{name}"].mean() == pytest.approx(0, abs=1e-6)


def test_learned_pooling_is_the_mean_until_weights_are_learned(word_encoder):
    equal = cosine.columns("base", word_encoder, QUERY, {})
    assert equal["base_cos_learned"] == pytest.approx(equal["base_cos_mean"])
    first_only = cosine.columns("base", word_encoder, QUERY, {3: [1.0, 0.0, 0.0]})
    assert first_only["base_cos_learned"] == pytest.approx(first_only["base_hint_first"], abs=1e-6)


def test_one_hint_clues_have_no_spread(word_encoder):
    cols = cosine.columns("base", word_encoder, Query(("flower",), ("rose", "car")), {})
    assert cols["base_hint_first"] == pytest.approx(cols["base_hint_last"])
    assert cols["base_hint_spread"].tolist() == [0.0, 0.0]
