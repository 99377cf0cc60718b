"""Glosses: the vendored WordNet table, how words are looked up in it, and how the clue model
reads a word with its gloss."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pytest

from pictorank.suggest.glossary import GLOSSARY, Glossary
from pictorank.suggest.model import ClueModel


def _table(path: Path, rows: dict[str, str]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(f"{lemma}\t{gloss}\n" for lemma, gloss in rows.items())
    return path


def test_the_vendored_table_defines_common_words_by_their_first_sense() -> None:
    assert GLOSSARY.gloss("Monday") == "the second day of the week; the first working day"
    assert GLOSSARY.gloss("sunflower").startswith("any plant of the genus Helianthus")
    assert GLOSSARY.gloss("mother-in-law") == GLOSSARY.gloss("Mother in law") is not None
    assert GLOSSARY.gloss("Moby Dick pac-man xyzzy") is None


def test_words_are_looked_up_as_the_game_rule_reads_them(tmp_path: Path) -> None:
    glossary = Glossary(_table(tmp_path / "g.tsv.gz", {
        "flame": "a hot glowing body of ignited gas", "new year's eve": "the last day of the year",
        "lie": "be lying, be prostrate", "bird of prey": "any of numerous carnivorous birds",
    }))
    assert glossary.gloss("flames") == "a hot glowing body of ignited gas"  # a base form of the last word
    assert glossary.gloss("New Year's eve (day)") == "the last day of the year"  # parentheses, possessive
    assert glossary.gloss("lying") == "be lying, be prostrate"
    assert glossary.gloss("bird of prey") == "any of numerous carnivorous birds"
    assert glossary.gloss("birds of prey") is None  # only the last word is inflected back
    assert glossary.gloss("(day)") is None and glossary.gloss("  ") is None


def test_the_digest_names_the_table(tmp_path: Path) -> None:
    one = Glossary(_table(tmp_path / "a.tsv.gz", {"a": "first letter"}))
    other = Glossary(_table(tmp_path / "b.tsv.gz", {"a": "a letter"}))
    assert one.digest != other.digest and len(one.digest) == 64


class _HashEncoder:
    model_id = "hash-test-encoder"

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        vectors = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=16) for t in texts])
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("glosses", [True, False])
def test_the_clue_model_reads_a_word_with_its_gloss(glosses: bool) -> None:
    encoder = _HashEncoder()
    model = ClueModel(encoder, glosses=glosses)  # type: ignore[arg-type]
    words = ["Monday", "xyzzy plugh"]
    read = model.word_vectors(words, encoder.encode(words))
    np.testing.assert_allclose(np.linalg.norm(read, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(read[1], encoder.encode(["xyzzy plugh"])[0])  # no gloss: the word alone
    mean = encoder.encode(["Monday"])[0] + encoder.encode([GLOSSARY.gloss("Monday")])[0]
    expected = mean / np.linalg.norm(mean) if glosses else encoder.encode(["Monday"])[0]
    np.testing.assert_allclose(read[0], expected, rtol=1e-5, atol=1e-6)
    assert model.get_params()["glosses"] is glosses
