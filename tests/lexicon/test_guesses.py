from __future__ import annotations

from pictorank.lexicon import playable, with_prior
import gzip
from pathlib import Path

from pictorank.lexicon.echo import echoes, hint_stems, irregular_inflections, read_forms, stem


def test_a_guess_that_restates_a_hint_is_an_echo() -> None:
    stems = hint_stems(["cold", "white", "falling"])
    assert [w for w in ["cold", "fall", "falls", "whites", "snow", "snowfall", "colder", "white snow"]
            if echoes(w, stems)] == ["cold", "fall", "falls", "whites"]
    stems = hint_stems(["person", "fire", "water hose"])
    assert echoes("fire hose", stems) and echoes("hose", stems) and not echoes("firefighter", stems)
    assert stem("running") == stem("run") and stem("flies") == stem("fly") and stem("stripes") == stem("stripe")


def test_an_irregular_form_of_a_hint_word_is_an_echo_but_a_derivation_is_a_guess() -> None:
    assert irregular_inflections()["frozen"] == {"freeze"}  # the vendored WordNet table
    frozen = hint_stems(["water", "frozen"])
    assert echoes("freeze", frozen) and echoes("froze", frozen) and echoes("frozen water", frozen)
    assert not echoes("freezer", frozen) and not echoes("ice", frozen)
    assert echoes("frozen", hint_stems(["freeze"])) and echoes("fell", hint_stems(["falling"]))
    assert echoes("mice", hint_stems(["mouse"])) and not echoes("farmer", hint_stems(["person", "farm"]))


def test_related_words_count_as_hint_words_only_when_given() -> None:
    cold = ["cold", "white", "falling"]
    related = {"cold": frozenset({"coldness", "cold shoulder"})}
    assert not echoes("coldness", hint_stems(cold)) and echoes("coldness", hint_stems(cold, related))
    assert not echoes("shoulder", hint_stems(cold, related))  # a related phrase adds no word of its own
    assert playable(cold, ["coldness", "snow", "snow-white"], related) == ["snow", "snow-white"]  # adds "snow"


def test_a_forms_table_reads_a_word_and_its_forms_a_line(tmp_path: Path) -> None:
    path = tmp_path / "forms.tsv.gz"
    path.write_bytes(gzip.compress(b"fell\tfall\nbetter\tgood\twell\n"))
    assert read_forms(path) == {"fell": {"fall"}, "better": {"good", "well"}}


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


def test_invisible_characters_cannot_hide_a_hint_word() -> None:
    """"ho\\u200brse" is the word horse to a reader: the echo rule reads it so (soft hyphen,
    joiners and word joiner too), and the Braille blank is no visible hint."""
    from pictorank.puzzles import is_blank

    for hidden in ("\u200b", "\u00ad", "\u200d", "\u2060"):
        assert echoes("horse", hint_stems([f"ho{hidden}rse", "animal"])), repr(hidden)
    assert is_blank("\u2800") and is_blank(" \u2800\u200b ")
