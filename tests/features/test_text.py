"""String helpers: description tokens, synonyms, and the letters of a compound spelled by hint words."""

from __future__ import annotations

import pytest

from pictorank.features.text import covered_fraction, synonyms, tokens


def test_tokens_and_synonyms_split_descriptions():
    assert tokens("Container, the bowl (holder)") == ["container", "bowl", "holder"]
    assert synonyms("container, bowl;  pouch") == ["container", "bowl", "pouch"]


def test_compound_answers_are_covered_by_their_hint_words():
    assert covered_fraction("sunflower", {"sun", "flower"}) == 1.0
    assert covered_fraction("sunflower", {"flower"}) == pytest.approx(6 / 9)
    assert covered_fraction("car", {"sun"}) == 0.0


def test_short_words_and_empty_options_cover_nothing():
    assert covered_fraction("isle", {"is"}) == 0.0  # 'is', 'a', 'of' would cover everything
    assert covered_fraction(" ", {"sun"}) == 0.0
