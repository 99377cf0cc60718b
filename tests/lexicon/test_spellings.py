"""One guess per word however it is spelled (pictorank.lexicon.spellings), and open play's
candidates holding one spelling of each word."""

from __future__ import annotations

import pytest

from pictorank.lexicon import playable
from pictorank.lexicon.glosses import read_glosses
from pictorank.lexicon.spellings import same_word, spelling_groups


@pytest.mark.parametrize("a, b", [("air traveler", "air traveller"), ("wristwatch", "wrist watch"),
                                  ("neighborhood", "neighbourhood"), ("centre", "center"), ("foetal", "fetal"),
                                  ("organisation", "organization"), ("us senate", "u.s. senate"),
                                  ("good-bye", "goodbye")])
def test_spellings_of_one_word(a: str, b: str) -> None:
    assert same_word(a, b)


@pytest.mark.parametrize("a, b", [("perceive", "perceived"), ("distrust", "mistrust"), ("behold", "beholden"),
                                  ("trillion", "zillion"), ("mum", "mom"), ("cash in", "cashed")])
def test_other_words_with_one_definition_stay_apart(a: str, b: str) -> None:
    assert not same_word(a, b)


def test_spellings_of_one_definition_share_a_key() -> None:
    glosses = {"air traveler": "someone who travels by airplane", "air traveller": "someone who travels by airplane",
               "flier": "someone who travels by airplane", "colour": "any material used for its color",
               "color": "a visual attribute of things"}
    groups = spelling_groups(list(glosses), glosses)
    assert groups == {"air traveler": "air traveler", "air traveller": "air traveler"}  # flier is another word


def test_the_wordnet_lexicon_groups_its_spellings() -> None:
    from pictorank.lexicon import DEFAULT_SOURCE, load_lexicon

    lexicon = load_lexicon(DEFAULT_SOURCE)
    groups = spelling_groups(lexicon.words, read_glosses())
    assert groups["air traveller"] == groups["air traveler"] and groups["wrist watch"] == groups["wristwatch"]
    assert groups["firefighter"] == groups["fire fighter"]
    assert "colour" not in groups or groups["colour"] != groups.get("color")


def test_candidates_hold_one_spelling_of_a_word_the_one_met_first() -> None:
    """The spelling nearest the clue is kept: the lexicon's phrase frequencies are estimates that
    would show "fire fighter" for firefighter."""
    spellings = {"air traveller": "air traveler", "air traveler": "air traveler"}
    kept = playable(["person", "airplane"], ["air traveller", "pilot", "air traveler", "passenger"],
                    spellings=spellings)
    assert kept == ["air traveller", "pilot", "passenger"]
    assert playable(["traveler"], ["air traveler", "air traveller"], spellings=spellings) == ["air traveler"]
