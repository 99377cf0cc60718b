"""The WordNet reading of bench/open_vocab_ranker_variants.py, on a three-synset WordNet: a wrong
depth, descendant count or compound split would measure a different column than the one named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import open_vocab_ranker_variants as bench  # noqa: E402  (bench/ is not a package)
from pictorank.lexicon.echo import stem  # noqa: E402

DATA_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by Princeton University
00000001 03 n 01 entity 0 001 ~ 00000002 n 0000 | that which is perceived
00000002 06 n 01 timepiece 0 002 @ 00000001 n 0000 ~ 00000003 n 0000 | a measuring instrument for keeping time
00000003 06 n 02 watch 0 ticker 0 001 @ 00000002 n 0000 | a small portable timepiece; "he looked at his watch"
"""
INDEX_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by Princeton University
entity n 1 1 ~ 1 0 00000001
timepiece n 1 2 @ ~ 1 0 00000002
watch n 1 1 @ 1 0 00000003
"""


@pytest.fixture(scope="module")
def wordnet(tmp_path_factory: pytest.TempPathFactory) -> bench.WordNet:
    folder = tmp_path_factory.mktemp("wordnet")
    for part in ("noun", "verb", "adj", "adv"):
        (folder / f"data.{part}").write_text(DATA_NOUN if part == "noun" else "", encoding="utf-8")
        (folder / f"index.{part}").write_text(INDEX_NOUN if part == "noun" else "", encoding="utf-8")
    return bench.WordNet(folder)


def test_a_word_is_found_whatever_its_case_with_its_gloss_less_the_examples(wordnet: bench.WordNet) -> None:
    [(part, synset, offset)] = wordnet.senses("Watch")
    assert (part, offset, synset.words) == ("noun", "00000003", ["watch", "ticker"])
    assert synset.gloss == "a small portable timepiece"
    assert wordnet.senses("clock") == []


def test_depth_counts_the_steps_to_the_root_and_descendants_every_synset_below(wordnet: bench.WordNet) -> None:
    assert [wordnet.depth("noun", o) for o in ("00000001", "00000002", "00000003")] == [0, 1, 2]
    assert [wordnet.descendants("noun", o) for o in ("00000001", "00000002", "00000003")] == [2, 1, 0]


def test_a_word_made_of_two_lexicon_words_also_gives_their_stems() -> None:
    stems = bench.split_parts(frozenset({"time", "piece", "keeper", "art"}))
    assert stems("measuring timepiece") >= {stem("time"), stem("piece"), stem("timepiece"), stem("measuring")}
    assert stem("art") not in stems("artifact")  # "ifact" is no word: no split


def test_a_words_kind_is_the_first_lemma_above_its_first_sense(wordnet: bench.WordNet) -> None:
    assert wordnet.kind("watch") == "timepiece"
    assert wordnet.kind("entity") is None  # the root has nothing above it
    assert wordnet.kind("clock") is None  # not in this WordNet


def test_a_compound_is_split_whatever_punctuation_follows_it() -> None:
    stems = bench.split_parts(frozenset({"time", "piece"}))
    assert stem("piece") in stems("a timepiece, or clock")
