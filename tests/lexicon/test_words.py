from __future__ import annotations

import gzip

import numpy as np
import pytest

from pictorank.errors import DataError
from pictorank.lexicon import Lexicon, guess_key, load_lexicon, matches, without_qualifier
from pictorank.lexicon.words import default_lexicon, read_table


def test_a_guess_matches_the_answer_with_or_without_its_qualifier() -> None:
    assert without_qualifier("library (building)") == "library"
    assert without_qualifier("(a)") == "(a)" and without_qualifier("dog") == "dog"
    assert matches("library", "library (building)") and matches("Library", "library (building)")
    assert matches("library (building)", "library (building)")
    assert not matches("libraries", "library (building)") and not matches("library (book)", "library (building)")
    assert guess_key("Library (building)") == guess_key("library") == guess_key("library (book)") == "library"


def test_the_default_lexicon_holds_everyday_english_without_proper_names() -> None:
    lexicon = default_lexicon()
    assert len(lexicon) >= 50_000 and lexicon.source == "wordnet"
    frequency = lexicon.frequencies()
    everyday = ["dog", "cat", "house", "car", "tree", "book", "water", "sun", "moon", "bread", "apple", "chair",
                "baby", "money", "phone", "clock", "ice", "rain", "snow", "umbrella", "library", "zebra",
                "sunflower", "firefighter", "watch", "ice cream", "sunday"]
    assert [w for w in everyday if w not in frequency] == []
    assert [w for w in ("paris", "poland", "thames") if w in frequency] == []  # names of instances
    assert frequency["dog"] > frequency["zebra"] > float(lexicon.zipf.min())


def test_a_word_list_may_give_frequencies(tmp_path) -> None:
    path = tmp_path / "words.tsv"
    path.write_text("zebra\t3.5\n\ndog\ncat\t\nnot|this\t4\n", encoding="utf-8")
    lexicon = load_lexicon(str(path))
    assert lexicon.words == ("cat", "dog", "zebra") and lexicon.zipf.tolist() == [0.0, 0.0, 3.5]
    assert lexicon.source == str(path)
    gzipped = tmp_path / "words.tsv.gz"
    gzipped.write_bytes(gzip.compress(b"dog\t5\n"))
    assert read_table(gzipped, "x").frequencies() == {"dog": 5.0}


@pytest.mark.parametrize("text, message", [("dog\tmany\n", "not a number"), ("\n|\n", "names no words")])
def test_a_bad_word_list_is_a_data_error(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "words.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load_lexicon(str(path))
    with pytest.raises(DataError, match="cannot read"):
        load_lexicon(str(tmp_path / "missing.tsv"))


def test_added_words_borrow_the_frequency_of_their_plain_form() -> None:
    lexicon = Lexicon(("dog", "library"), np.array([5.0, 4.0], np.float32), "test")
    merged = lexicon.with_words(["library (building)", "dog", "zorb"])
    assert merged.frequencies() == {"dog": 5.0, "library": 4.0, "library (building)": 4.0, "zorb": 4.0}
    assert merged.source == "test"


def test_a_word_list_is_checked_where_it_is_read(tmp_path, monkeypatch) -> None:
    """A 256 MB one-line list passed 8 GB of memory; a 16-million-character "word" came back in
    answers: size, word length, word count and frequencies are checked before anything is
    embedded, and a FIFO is refused rather than read."""
    import os

    import pictorank.lexicon.words as words

    long_line = tmp_path / "long.tsv"
    long_line.write_text("x" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="5,000 characters long"):
        load_lexicon(str(long_line))
    nan = tmp_path / "nan.tsv"
    nan.write_text("dog\tnan\n", encoding="utf-8")
    with pytest.raises(DataError, match="not a finite number"):
        load_lexicon(str(nan))
    bom = tmp_path / "bom.tsv"
    bom.write_text("\ufeffdog\t3\n", encoding="utf-8")
    assert load_lexicon(str(bom)).words == ("dog",)
    monkeypatch.setattr(words, "MAX_LIST_BYTES", 100)
    big = tmp_path / "big.tsv"
    big.write_text("word\n" * 50, encoding="utf-8")
    with pytest.raises(DataError, match="at most 100"):
        load_lexicon(str(big))
    monkeypatch.setattr(words, "MAX_LIST_BYTES", 10_000)
    monkeypatch.setattr(words, "MAX_LIST_WORDS", 3)
    many = tmp_path / "many.tsv"
    many.write_text("a\nb\nc\nd\n", encoding="utf-8")
    with pytest.raises(DataError, match="more than 3 words"):
        load_lexicon(str(many))
    fifo = tmp_path / "fifo.tsv"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="not a regular file"):
        load_lexicon(str(fifo))
