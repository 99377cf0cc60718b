"""The clue-giver's game rule and input checks: no pictogram names the word, none repeats, and
every bad request is refused with a clear UsageError (fast: no model)."""

from __future__ import annotations

import pytest

from pictorank.errors import UsageError
from pictorank.suggest.parts import PartIndex
from pictorank.suggest.rules import MAX_AVOID, MAX_WORD_LENGTH, check_request, is_valid_clue, names_word


@pytest.mark.parametrize(
    "description, word",
    [("cat, feline (animal), felid", "cats"), ("cat, feline (animal), felid", "Cat"), ("box", "boxes"),
     ("baby, infant", "babies"), ("knife, sword", "knives"), ("man, male", "men"), ("goal", "goal"),
     ("vegetable (above ground)", "vegetable(s)"), ("swim", "swimming"),
     # the inflected word is not the last one; possessives; -ying and short -es forms
     ("bird of prey, raptor, falcon", "birds of prey"), ("mother-in-law", "mothers-in-law"),
     ("star of David", "stars of David"), ("dog, canine (animal), canid", "dog's"), ("dog", "Dog’s"),
     ("child, kid, youngster", "children's"), ("lie, recline", "lying"), ("go, move", "goes")],
)
def test_a_pictogram_naming_the_word_or_an_inflection_is_banned(description: str, word: str) -> None:
    assert names_word(description, word)


@pytest.mark.parametrize(
    "description, word",
    [("sun", "sunflower"), ("flower, bloom, blossom", "sunflower"), ("paper, card, page", "credit card"),
     ("cat, feline (animal), felid", "kitten"), ("language", "Thai (language)"), ("dog", "dog's bowl"),
     ("bird", "birds of prey"), ("mother", "Mother's Day")],
)
def test_parts_of_the_word_are_allowed(description: str, word: str) -> None:
    assert not names_word(description, word)


def test_a_clue_is_valid_only_without_naming_and_repeats() -> None:
    assert is_valid_clue(["flower", "sun"], "sunflower")
    assert not is_valid_clue(["light", "tower"], "lighthouse", ["tower", "house"])  # an avoid word is named
    assert is_valid_clue(["light", "house, building"], "lighthouse", ["towers", "dog's bowl"])  # parts are fine
    assert not is_valid_clue(["sun", "sun"], "sunflower")
    assert not is_valid_clue(["animal", "cat, feline (animal), felid"], "cats")


def test_parts_name_head_modifier_and_sense() -> None:
    descriptions = ["flower", "sun", "cylinder, can", "gas", "language", "card"]
    index = PartIndex(descriptions)
    sunflower = index.match("sunflower")
    assert sunflower.head[0] == 1 and sunflower.modifier[1] == 1
    cylinder = index.match("gas cylinders")
    assert cylinder.head[2] == 1 and cylinder.modifier[3] == 1
    assert index.match("Thai (language)").parenthesis[4] == 1
    assert index.match("card").head[5] == 0  # the whole word is no part of itself


@pytest.mark.parametrize(
    "word, avoid, message",
    [
        ("", [], "blank"),
        ("   ", [], "blank"),
        ("x" * (MAX_WORD_LENGTH + 1), [], "characters long"),
        ("sun|flower", [], "contains '|'"),
        ("sunflower", ["rose", " "], "avoid word is blank"),
        ("sunflower", ["a|b"], "contains '|'"),
        ("sunflower", [f"w{i}" for i in range(MAX_AVOID + 1)], f"at most {MAX_AVOID}"),
        ("sunflower", "rose", "list of words"),
        (None, [], "must be text"),
    ],
)
def test_bad_requests_are_refused_clearly(word: object, avoid: object, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("|", r"\|")):
        check_request(word, avoid, 4, 5)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_length, top", [(0, 5), (7, 5), (4, 0), (4, 21), (True, 5), (2.5, 5)])
def test_lengths_and_counts_are_bounded(max_length: object, top: object) -> None:
    with pytest.raises(UsageError, match="whole number"):
        check_request("sunflower", [], max_length, top)  # type: ignore[arg-type]


def test_a_good_request_is_cleaned() -> None:
    assert check_request(" sunflower ", ["rose", "rose", "sunflower", "daisy"], 4, 5) == ("sunflower", ["rose", "daisy"])


def test_avoid_words_equal_up_to_case_or_accents_are_dropped() -> None:
    """The encoder is uncased and strips accents: `Sunflower` would tie with `sunflower` under any
    clue, `cafe` with `café` (either Unicode form)."""
    assert check_request("sunflower", ["Sunflower", "Rose", "rose", "SUNFLOWER ", "daisy"], 4, 5) == (
        "sunflower", ["Rose", "daisy"])
    assert check_request("caf\u00e9", ["cafe", "cafe\u0301", "CAF\u00c9", "bar"], 4, 5) == ("caf\u00e9", ["bar"])


def test_the_clue_givers_rule_is_open_plays_echo_rule() -> None:
    """One rule for both sides of the game: a pictogram names a word exactly when open play would
    not offer that word back for the pictogram as a hint."""
    from pictorank.lexicon.echo import echoes, hint_stems, named_among

    descriptions = ["cat, feline (animal), felid", "tower", "sun", "ice cream (cone)", "knife, sword", "light"]
    for word in ("cats", "towers", "sunflower", "ice cream", "knives", "Cat's", "ho\u200bwer", "lighthouse"):
        expected = [echoes(word, hint_stems([d])) for d in descriptions]
        assert [names_word(d, word) for d in descriptions] == expected
        assert named_among(descriptions, [word]) == expected
    assert named_among(descriptions, ["dog", "towers", "knife"]) == [False, True, False, False, True, False]
