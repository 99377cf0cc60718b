from __future__ import annotations

from pictorank.lexicon import playable, with_prior
from pictorank.lexicon.echo import echoes, hint_stems, stem


def test_a_guess_that_restates_a_hint_is_an_echo() -> None:
    stems = hint_stems(["cold", "white", "falling"])
    assert [w for w in ["cold", "fall", "falls", "whites", "snow", "snowfall", "colder", "white snow"]
            if echoes(w, stems)] == ["cold", "fall", "falls", "whites"]
    stems = hint_stems(["person", "fire", "water hose"])
    assert echoes("fire hose", stems) and echoes("hose", stems) and not echoes("firefighter", stems)
    assert stem("running") == stem("run") and stem("flies") == stem("fly") and stem("stripes") == stem("stripe")


def test_playable_guesses_drop_hint_words_and_repeated_forms() -> None:
    options = ["cold", "snow", "Snow", "snow (weather)", "fall", "ice (frozen water)", "snowfall", "ice"]
    assert playable(["cold", "white", "falling"], options) == ["snow", "ice", "snowfall"]
    assert playable(["x"], ["Ice (frozen water)", "ice (rink)"]) == ["Ice (frozen water)"]


def test_the_frequency_prior_lifts_common_words_by_its_weight() -> None:
    options, scores = ["zebu", "zebra", "horse"], [1.0, 0.9, 0.2]
    zipf = {"zebu": 1.5, "zebra": 3.4, "horse": 4.6}
    assert with_prior(options, scores, zipf, 0.0)[0] == options
    assert with_prior(options, scores, zipf, 0.5)[0][0] == "zebra"
    assert with_prior(options, scores, zipf, 10.0)[0] == ["horse", "zebra", "zebu"]
    assert with_prior(["new", "zebu"], [0.1, 1.0], zipf, 1.0)[0] == ["zebu", "new"]  # unknown: the rarest
    assert with_prior([], [], zipf) == ([], [])
