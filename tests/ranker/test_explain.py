"""Explanations: readable groups of LightGBM's contributions, per-hint pulls, and the sentence."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.features import feature_names
from pictorank.ranker.explain import (
    GROUPS,
    feature_group,
    learned_explanation,
    similarity_explanation,
    spelling_words,
    summary_sentence,
)


def test_every_feature_column_has_a_readable_group():
    assert {feature_group(name) for name in feature_names()} <= set(GROUPS)


@pytest.mark.parametrize("option,hints,words", [
    ("sunflower", ["flower, blossom", "sun"], ["sun", "flower"]),
    ("Sea Lion", ["animal", "water, sea", "lion"], ["sea", "lion"]),
    ("flower", ["flower", "sun"], ["flower"]),
    ("hammer", ["flower", "sun"], []),
    ("sunday", ["sun", "flower"], []),  # 'sun' spells half of it: not enough to say so
])
def test_spelling_words(option, hints, words):
    assert spelling_words(option, hints) == words


def test_summary_says_what_spells_it_and_which_hint_is_closest():
    assert summary_sentence("sunflower", ["flower, blossom", "sun"], [0.9, 0.4], spelling=0.3) == "sun + flower spell it; closest to 'flower'"
    assert summary_sentence("flower", ["flower", "sun"], [0.9, 0.4]) == "closest to 'flower'"  # the word itself spells nothing new
    assert summary_sentence("river", ["flower", "sun"], [-0.2, -0.1]) == "nothing in the clue pulls it up much"
    assert summary_sentence("card", ["card", "money"], [0.5, 0.1], taught=True).endswith("train clues like this one point to it")


def test_summary_names_no_reason_whose_contribution_is_not_positive():
    # spelled, but the spelling group pulled it down (or the ranker has no spelling group)
    assert summary_sentence("sunflower", ["flower", "sun"], [0.9, 0.4], spelling=-0.05) == "closest to 'flower'"
    assert summary_sentence("sunflower", ["flower", "sun"], [0.9, 0.4]) == "closest to 'flower'"
    assert summary_sentence("sunflower", ["flower", "sun"], [-0.1, -0.2], spelling=-0.05) == "nothing in the clue pulls it up much"
    names = ["base_cos_joined", "lex_cover", "assoc_pmi_max"]
    e = learned_explanation("sunflower", ("flower", "sun"), names, np.array([0.4, -0.05, 0.1, -1.0]), np.array([0.6, 0.2]))
    assert e.summary == "closest to 'flower'"


def test_similarity_explanation_reports_each_hints_cosine():
    e = similarity_explanation("tulip", ("flower", "sun"), np.array([0.7, 0.2]), 0.55)
    assert e.hints == ("flower", "sun") and e.pulls == pytest.approx((0.7, 0.2))
    assert e.groups == {"similarity": pytest.approx(0.55)} and e.summary == "closest to 'flower'"


def test_learned_explanation_groups_add_up_and_hints_share_the_similarity():
    names = ["base_cos_joined", "base_hint_first", "ft_hint_last", "lex_cover", "assoc_pmi_max", "hub_csls", "q_hints"]
    contributions = np.array([0.6, 0.3, 0.2, 0.5, 0.25, -0.05, 0.0, -1.0])  # ..., bias
    e = learned_explanation("sunflower", ("flower", "sun"), names, contributions, np.array([0.6, 0.2]))
    assert e.groups == pytest.approx({"similarity": 1.1, "spelling": 0.5, "train_clues": 0.2, "clue_size": 0.0,
                                      "baseline": -1.0})
    assert sum(e.groups.values()) == pytest.approx(contributions.sum())  # exactly the score
    # first hint: its own column + 3/4 of the whole-clue column; last hint: its own + 1/4
    assert e.pulls == pytest.approx((0.3 + 0.6 * 0.75, 0.2 + 0.6 * 0.25))
    assert sum(e.pulls) == pytest.approx(e.groups["similarity"])
    assert e.summary == "sun + flower spell it; closest to 'flower'"


def test_learned_explanation_with_no_positive_similarity_shares_equally():
    e = learned_explanation("x", ("a", "b"), ["ft_cos_mean"], np.array([-0.4, 0.0]), np.array([-0.1, -0.3]))
    assert e.pulls == pytest.approx((-0.2, -0.2))


def test_a_repeated_pictogram_is_one_hint_of_the_explanation() -> None:
    """"intensity, intensity" (very intense): the learned ranker's first-hint and last-hint columns
    gave the two copies pulls of opposite signs, and the page said "closest to 'intensity'" beside
    "intensity pulls it down". A repeated hint is now one, its pulls added up (cosines: once)."""
    import numpy as np

    from pictorank.ranker.explain import learned_explanation, similarity_explanation

    hints = ["feeling, emotion", "intensity", "intensity"]
    names = ["base_hint_first", "base_hint_last", "base_joined"]
    contributions = np.array([0.1, -0.3, 0.5, 0.0])  # first hint, last hint, whole clue, bias
    sims = np.array([0.2, 0.6, 0.6])
    explanation = learned_explanation("passion", hints, names, contributions, sims)
    assert explanation.hints == ("feeling, emotion", "intensity")
    assert sum(explanation.pulls) == pytest.approx(0.3)  # the similarity group, split over two hints
    plain = similarity_explanation("passion", hints, sims, 0.5)
    assert plain.hints == ("feeling, emotion", "intensity") and plain.pulls == pytest.approx((0.2, 0.6))
    for e in (explanation, plain):
        if "closest to 'intensity'" in e.summary:
            assert e.pulls[1] > 0


def test_open_play_says_what_singles_a_guess_out() -> None:
    """Every open-play guess got the same "rain pulls it up, umbrella pulls it up": the sentence
    now leads with what the guess's own columns say (its WordNet kind and definition, how common
    it is), so guesses of one clue read differently, and nothing is said of what is unknown."""
    from pictorank.open_play.ranker import guess_reasons

    hints = ("weather, climate", "water", "falling")
    rain = {"wn_kind_first": 1.0, "wn_gloss_first": 0.0, "wn_gloss_hints": 2 / 3, "open_zipf_z": 1.4}
    raindrop = {"wn_kind_first": 0.0, "wn_gloss_first": 0.0, "wn_gloss_hints": 1 / 3, "open_zipf_z": -1.2}
    unknown = {"wn_kind_first": float("nan"), "wn_gloss_first": float("nan"), "wn_gloss_hints": float("nan"),
               "open_zipf_z": 0.1}
    assert guess_reasons(rain, hints) == ["a kind of 'weather'", "its definition names 2 of the hints", "a common word"]
    assert guess_reasons(raindrop, hints) == ["its definition names 1 of the hints", "a rare word"]
    assert guess_reasons(unknown, hints) == []
