"""Feature extraction: named columns in a fixed order, sensible values, nothing tied to ids."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.features import (
    FeatureExtractor,
    _covered_fraction,
    expand_weights,
    feature_names,
    fit_position_weights,
    synonyms,
    tokens,
)
from pictorank.puzzles import to_queries
from pictorank.query import Query

TOY_TRAIN = [
    Query(("flower", "sun"), ("sunflower", "car", "bread", "boat"), "sunflower"),
    Query(("flower", "water, sea"), ("water lily", "car", "bread", "boat"), "water lily"),
    Query(("vehicle", "water, sea"), ("boat", "car", "bread", "water lily"), "boat"),
    Query(("vehicle", "road"), ("car", "boat", "bread", "sunflower"), "car"),
    Query(("flower", "night"), ("night flower", "car", "boat", "bread"), "night flower"),
]


def test_tokens_and_synonyms_split_descriptions():
    assert tokens("Container, the bowl (holder)") == ["container", "bowl", "holder"]
    assert synonyms("container, bowl;  pouch") == ["container", "bowl", "pouch"]


def test_compound_answers_are_covered_by_their_hint_words():
    assert _covered_fraction("sunflower", {"sun", "flower"}) == 1.0
    assert _covered_fraction("sunflower", {"flower"}) == pytest.approx(6 / 9)
    assert _covered_fraction("car", {"sun"}) == 0.0


def test_expand_weights_reuses_the_last_weight():
    assert expand_weights([0.5, 1.0], 4).tolist() == [0.5, 1.0, 1.0, 1.0]


def test_transform_returns_the_named_columns_one_row_per_option(encoder):
    extractor = FeatureExtractor(encoder).fit(TOY_TRAIN)
    table = extractor.transform(TOY_TRAIN[:2])
    assert list(table.columns) == feature_names()
    assert len(table) == 8
    assert np.isfinite(table.to_numpy()).all()
    first = table.iloc[:4]
    assert first["lex_cover"].tolist()[0] == 1.0  # sunflower = sun + flower
    assert first["base_rank_joined"].min() == 0 and first["base_gap_joined"].max() == 0


def test_unseen_vocabulary_gets_neutral_association_values(encoder):
    extractor = FeatureExtractor(encoder, min_pair_count=1).fit(TOY_TRAIN)
    stats = extractor.token_stats_
    assert stats.option_values({"flower"}, "garden bed", 1)[0] == 0  # no train answer says 'bed'
    assert stats.option_values({"flower"}, "wild flower", 1)[0] > 0  # 'night flower': texts, not ids
    table = extractor.transform([Query(("planet", "ring"), ("saturn", "comet"), "saturn")])
    assert (table["assoc_pmi_max"] == 0).all() and (table["assoc_answer_token_seen"] == 0).all()
    for column in ("assoc_base_hint_first", "assoc_ft_hint_rest", "assoc_base_rev_hints", "assoc_pair_count"):
        assert (table[column] == 0).all(), column  # descriptions never seen in train


def test_train_clues_with_the_same_descriptions_vote_for_similar_options(encoder):
    """'vehicle' + 'water, sea' was a boat in train, so a ship is a better guess than a lorry:
    through the descriptions' answer centroids, the clues sharing both, and the reverse
    neighbours (the train answer nearest to 'ship' is 'boat', clued with these descriptions)."""
    extractor = FeatureExtractor(encoder, neighbours=1).fit(TOY_TRAIN)
    table = extractor.transform([Query(("vehicle", "water, sea"), ("ship", "lorry"))])
    for column in ("assoc_base_hint_rest", "assoc_pair_nn", "assoc_base_rev_hints", "assoc_ft_rev_rest"):
        assert table[column].iloc[0] > table[column].iloc[1], column
    assert table["assoc_pair_count"].tolist() == [1.0, 1.0]


def test_an_option_that_is_a_train_answer_does_not_see_its_own_clue(encoder):
    """On out-of-fold rows the wrong options are answers of the fitted folds: their own rows
    must not count, or 'seen in train' would mean 'wrong' (never true on val/test)."""
    small = dict(min_pair_count=1, neighbours=2, hub_k=2)  # fewer than the 4 rows left
    extractor = FeatureExtractor(encoder, **small).fit(TOY_TRAIN)
    own = extractor.transform([Query(("flower", "night"), ("night flower", "moon"))])
    fresh = FeatureExtractor(encoder, **small).fit(TOY_TRAIN[:4])
    without = fresh.transform([Query(("flower", "night"), ("night flower", "moon"))])
    columns = ["assoc_pmi_max", "assoc_answer_token_seen", "hub_option", "assoc_pair_count",
               *(f"assoc_{space}_{name}" for space in ("base", "ft") for name in ("knn_weighted", "hint_first", "rev_hints"))]
    for column in columns:
        assert own[column].iloc[0] == pytest.approx(without[column].iloc[0], abs=1e-6), column


def test_position_weights_are_learned_per_clue_length(encoder, vocab, train_puzzles):
    learned = fit_position_weights(to_queries(train_puzzles[:200], vocab), encoder, passes=1)
    assert set(learned) <= {2, 3, 4} and 2 in learned
    for bucket, weights in learned.items():
        assert len(weights) == bucket and max(weights) == 1.0 and min(weights) >= 0


def test_transform_needs_fit(encoder):
    with pytest.raises(RuntimeError, match="not fitted"):
        FeatureExtractor(encoder).transform(TOY_TRAIN)
