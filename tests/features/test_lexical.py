"""Lexical columns: shared words, compounds and fuzzy matches between options and descriptions."""

from __future__ import annotations

import pytest

from pictorank.features import lexical
from pictorank.query import Query


def test_compounds_and_shared_words_score_above_unrelated_options():
    cols = lexical.columns(Query(("flower", "sun, star"), ("sunflower", "sun hat", "car")))
    assert cols["lex_cover"].tolist() == [1.0, pytest.approx(3 / 6), 0.0]
    assert cols["lex_shared"].tolist() == [0.0, 1.0, 0.0]  # 'sunflower' is one word
    assert cols["lex_shared_frac"].tolist() == [0.0, 0.5, 0.0]
    assert cols["lex_substr_hints"].tolist() == [1.0, 0.5, 0.0]
    assert cols["lex_substr_first"].tolist() == [1.0, 0.0, 0.0]
    assert cols["lex_fuzz_max"][0] > cols["lex_fuzz_max"][2]
