"""Association columns: what train clues say about an option, matched by text, never its own rows."""

from __future__ import annotations

import numpy as np

from pictorank.features import associations
from pictorank.features.associations import Reference, TokenStats
from pictorank.query import Query


def _columns(train: list[Query], encoder, q: Query, neighbours: int = 10) -> dict[str, np.ndarray]:
    encoders = {"base": encoder, "ft": encoder}
    reference = Reference.embed(train, encoders)
    return associations.columns(q, encoders, reference, TokenStats.count(train), neighbours, min_pair_count=1)


def test_token_associations_are_learned_from_texts_not_ids(toy_train):
    stats = TokenStats.count(toy_train)
    assert stats.option_values({"flower"}, "garden bed", 1)[0] == 0  # no train answer says 'bed'
    assert stats.option_values({"flower"}, "wild flower", 1)[0] > 0  # 'night flower': texts, not ids


def test_an_option_does_not_count_its_own_train_rows(toy_train):
    stats = TokenStats.count(toy_train)
    assert stats.option_values({"flower", "night"}, "night flower", 1) == (0.0, 0.0, 0.0)
    assert stats.option_values({"flower", "night"}, "night owl", 1)[0] > 0


def test_reference_finds_rows_by_answer_and_by_description_text(toy_train, word_encoder):
    reference = Reference.embed(toy_train, {"base": word_encoder, "ft": word_encoder})
    assert reference.rows_of("boat") == [2] and reference.rows_of("ship") == []
    assert sorted(reference.rows_with_hint("water, sea").tolist()) == [1, 2]
    assert reference.rows_with_hint("water").tolist() == []  # a whole description, not a word
    assert reference.clue_vectors["base"].shape == (5, word_encoder.dimension)


def test_unseen_vocabulary_gets_neutral_association_values(toy_train, word_encoder):
    cols = _columns(toy_train, word_encoder, Query(("planet", "ring"), ("saturn", "comet"), "saturn"))
    assert (cols["assoc_pmi_max"] == 0).all() and (cols["assoc_answer_token_seen"] == 0).all()
    for column in ("assoc_base_hint_first", "assoc_ft_hint_rest", "assoc_base_rev_hints", "assoc_pair_count"):
        assert (cols[column] == 0).all(), column  # descriptions never seen in train


def test_train_clues_with_the_same_descriptions_vote_for_similar_options(toy_train, encoder):
    """'vehicle' + 'water, sea' was a boat in train, so a ship is a better guess than a lorry:
    through the descriptions' answer centroids, the clues sharing both, and the reverse
    neighbours (the train answer nearest to 'ship' is 'boat', clued with these descriptions)."""
    cols = _columns(toy_train, encoder, Query(("vehicle", "water, sea"), ("ship", "lorry")), neighbours=1)
    for column in ("assoc_base_hint_rest", "assoc_pair_nn", "assoc_base_rev_hints", "assoc_ft_rev_rest"):
        assert cols[column][0] > cols[column][1], column
    assert cols["assoc_pair_count"].tolist() == [1.0, 1.0]
