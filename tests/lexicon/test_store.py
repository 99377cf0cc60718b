from __future__ import annotations

import numpy as np
import pytest

from helpers import WordHashModel
from pictorank.encoders import Encoder
from pictorank.errors import ModelError
from pictorank.lexicon import Lexicon
from pictorank.lexicon import store


def _lexicon() -> Lexicon:
    return Lexicon(("dog", "library (building)", "zebra"), np.array([5.1, 4.8, 3.4], np.float32), "wordnet")


def test_stored_embeddings_come_back_with_their_words_and_frequencies(tmp_path) -> None:
    encoder = Encoder(model=WordHashModel(), model_id="word-hash-lexicon")
    store.build(tmp_path, _lexicon(), encoder, "base")
    loaded = store.load(tmp_path)
    assert loaded is not None and loaded.lexicon.words == _lexicon().words and loaded.space == "base"
    assert loaded.encoder_id == "word-hash-lexicon" and loaded.lexicon.source == "wordnet"
    np.testing.assert_allclose(loaded.lexicon.zipf, _lexicon().zipf)
    expected = encoder.encode(list(_lexicon().words))
    assert np.abs(loaded.vectors - expected).max() < 0.02  # int8 storage
    assert (loaded.vectors @ expected.T).argmax(axis=1).tolist() == [0, 1, 2]


def test_a_folder_without_a_lexicon_has_none_and_a_damaged_one_is_refused(tmp_path) -> None:
    assert store.load(tmp_path) is None
    store.build(tmp_path, _lexicon(), Encoder(model=WordHashModel(), model_id="w"), "ft")
    path = tmp_path / store.LEXICON_FILE
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(ModelError, match="corrupt"):
        store.load(tmp_path)
