"""Familiarity columns: how far a clue and its options lie from the training clues and answers."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.features import FeatureExtractor, familiarity
from pictorank.features.associations import Reference
from pictorank.query import Query, joined_text


@pytest.fixture
def reference(toy_train, word_encoder) -> Reference:
    return Reference.embed(toy_train, {"base": word_encoder, "ft": word_encoder})


def test_share_of_descriptions_known_to_train_is_matched_by_text(reference, word_encoder):
    known = familiarity.columns(Query(("flower", "vehicle"), ("rose", "bus")), word_encoder, reference)
    half = familiarity.columns(Query(("flower", "necktie"), ("rose", "bus")), word_encoder, reference)
    new = familiarity.columns(Query(("necktie", "chart increasing"), ("big business", "dry land")), word_encoder, reference)
    assert known["fam_hints_known"].tolist() == [1.0, 1.0]
    assert half["fam_hints_known"].tolist() == [0.5, 0.5]
    assert new["fam_hints_known"].tolist() == [0.0, 0.0]
    # 'water, sea' is one description: the word 'water' alone is another text, so it is unknown
    assert familiarity.columns(Query(("water",), ("a", "b")), word_encoder, reference)["fam_hints_known"][0] == 0.0


def test_repeated_descriptions_count_once(reference, word_encoder):
    cols = familiarity.columns(Query(("flower", "flower", "flower", "necktie"), ("rose", "bus")), word_encoder, reference)
    assert cols["fam_hints_known"][0] == 0.5


def test_clue_and_option_closeness_are_nearest_train_cosines_in_the_base_space(reference, word_encoder, toy_train):
    q = Query(("vehicle", "road"), ("rose", "bus", "night"))
    cols = familiarity.columns(q, word_encoder, reference)
    clue = word_encoder.encode([joined_text(q.hints)])[0]
    expected_clue = max(float(word_encoder.encode([joined_text(t.hints)])[0] @ clue) for t in toy_train)
    assert cols["fam_clue_nn"] == pytest.approx(np.full(3, expected_clue), abs=1e-6)
    answers = word_encoder.encode([t.answer for t in toy_train])
    expected = (word_encoder.encode(list(q.options)) @ answers.T).max(axis=1)
    assert cols["fam_option_nn"] == pytest.approx(expected, abs=1e-6)
    assert cols["fam_options_mean"] == pytest.approx(np.full(3, expected.mean()), abs=1e-6)


def test_rows_answered_by_an_option_do_not_count(reference, word_encoder):
    """On out-of-fold rows the wrong options are train answers; their own rows must not make the
    clue look familiar (on val/test no option is ever a train answer)."""
    q = Query(("flower", "night"), ("night flower", "bus"))  # 'night' is used only by night flower's clue
    cols = familiarity.columns(q, word_encoder, reference)
    assert cols["fam_hints_known"][0] == 0.5
    assert cols["fam_option_nn"][0] < 1.0 - 1e-6  # its own answer row is left out
    assert cols["fam_clue_nn"][0] < 1.0 - 1e-6  # and so is its own clue


def test_an_unseen_vocabulary_is_less_familiar_than_train_like_clues(toy_train, word_encoder):
    extractor = FeatureExtractor(word_encoder).fit(toy_train)
    home = extractor.transform([Query(("flower", "sun"), ("night lily", "boat car"))])
    away = extractor.transform([Query(("necktie", "chart increasing"), ("big business", "dry land"))])
    for column in ("fam_hints_known", "fam_clue_nn", "fam_options_mean"):
        assert home[column].iloc[0] > away[column].iloc[0], column
