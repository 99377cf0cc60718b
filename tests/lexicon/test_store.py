from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import WordHashModel
from pictorank.encoders import Encoder
from pictorank.artifacts import sha256_file
from pictorank.errors import ModelError
from pictorank.lexicon import Lexicon
from pictorank.lexicon import store
from pictorank.lexicon.glosses import read_glosses


def _lexicon() -> Lexicon:
    return Lexicon(("dog", "library (building)", "zebra"), np.array([5.1, 4.8, 3.4], np.float32), "wordnet")


def _encoders() -> dict[str, Encoder]:
    return {"base": Encoder(model=WordHashModel(), model_id="word-hash-base"),
            "ft": Encoder(model=WordHashModel(dimension=48), model_id="word-hash-ft")}


def test_stored_embeddings_come_back_in_every_space_with_their_words_and_frequencies(tmp_path) -> None:
    encoders = _encoders()
    store.build(tmp_path, _lexicon(), encoders, "ft")
    loaded = store.load(tmp_path)
    assert loaded is not None and loaded.lexicon.words == _lexicon().words and loaded.space == "ft"
    assert loaded.encoder_ids == {"base": "word-hash-base", "ft": "word-hash-ft"} and loaded.encoder_id == "word-hash-ft"
    assert loaded.lexicon.source == "wordnet"
    np.testing.assert_allclose(loaded.lexicon.zipf, _lexicon().zipf)
    for space, encoder in encoders.items():
        expected = encoder.encode(list(_lexicon().words))
        got = loaded.vectors[space].all()
        assert np.abs(got - expected).max() < 0.01  # int8 with a scale a row
        assert (got @ expected.T).argmax(axis=1).tolist() == [0, 1, 2]
    np.testing.assert_allclose(loaded.search_vectors(), loaded.vectors["ft"].all())


def test_the_searched_space_must_be_embedded() -> None:
    with pytest.raises(ValueError, match="searched space 'ft'"):
        store.embed(_lexicon(), {"base": _encoders()["base"]}, "ft")


def test_a_folder_without_a_lexicon_has_none_and_a_damaged_one_is_refused(tmp_path) -> None:
    assert store.load(tmp_path) is None
    store.build(tmp_path, _lexicon(), {"ft": Encoder(model=WordHashModel(), model_id="w")}, "ft")
    path = store.stored_file(tmp_path)
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(ModelError, match="corrupt"):
        store.load(tmp_path)


def test_a_lexicon_stored_by_an_older_pictorank_is_refused_with_how_to_rebuild_it(tmp_path) -> None:
    store.build(tmp_path, _lexicon(), {"base": _encoders()["base"]}, "base")
    config_path = tmp_path / store.LEXICON_CONFIG
    config = json.loads(config_path.read_text())
    del config["format"]
    config_path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"another version of pictorank.*pictorank lexicon --model"):
        store.load(tmp_path)


def test_the_glosses_of_the_words_wordnet_defines_are_stored_by_the_base_encoder(tmp_path) -> None:
    encoders = _encoders()
    store.build(tmp_path, _lexicon(), encoders, "ft")
    loaded = store.load(tmp_path)
    assert loaded is not None and loaded.glosses is not None
    assert set(loaded.glosses.texts) == {"dog", "zebra"}  # WordNet has no lemma "library (building)"
    table = read_glosses()
    for word in ("dog", "zebra"):
        expected = encoders["base"].encode([table[word]])[0]
        assert float(loaded.glosses.get(word) @ expected) > 0.99
    assert store.load(tmp_path).glosses.get("library (building)") is None


def test_a_lexicon_stored_before_glosses_still_loads_without_them(tmp_path) -> None:
    stored = store.embed(_lexicon(), {"base": _encoders()["base"]}, "base")
    store.save(tmp_path, stored)
    config_path = tmp_path / store.LEXICON_CONFIG
    config_path.write_text(json.dumps({**json.loads(config_path.read_text()), "format": 2}))
    loaded = store.load(tmp_path)
    assert loaded is not None and loaded.glosses is None and loaded.lexicon.words == _lexicon().words


def test_gloss_search_vectors_read_a_word_without_a_gloss_by_its_own_base_vector() -> None:
    base = _encoders()["base"]
    glosses = store.embed_glosses(_lexicon(), base)
    vectors = store.gloss_search_vectors(_lexicon().words, glosses, base)
    assert vectors.shape == (3, 32)
    np.testing.assert_allclose(vectors[1], base.encode(["library (building)"])[0], atol=1e-6)
    np.testing.assert_allclose(vectors[0], glosses.get("dog"), atol=1e-6)


def test_glosses_that_do_not_fit_their_words_are_refused_even_with_a_matching_hash(tmp_path) -> None:
    store.build(tmp_path, _lexicon(), _encoders(), "ft")
    path = store.stored_file(tmp_path)
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files}
    arrays["gloss_rows"] = arrays["gloss_rows"] + 10  # rows past the last word
    np.savez(path, **arrays)
    config_path = tmp_path / store.LEXICON_CONFIG
    config = json.loads(config_path.read_text())
    config["files"][path.name] = sha256_file(path)
    config_path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match="corrupt lexicon"):
        store.load(tmp_path)


def test_a_new_lexicon_replaces_the_old_in_one_step_and_a_killed_write_leaves_one_that_serves(tmp_path) -> None:
    """The vectors are written beside the old ones under their own name and lexicon.json is
    switched to them by one rename: stopped after any write, the folder holds a lexicon that
    loads (the old one or the new), and the next write removes what a killed one left."""
    import os

    old_words = _lexicon()
    store.build(tmp_path, old_words, {"base": _encoders()["base"]}, "base")
    old_file = store.stored_file(tmp_path)
    new_words = old_words.with_words(["platypus"])
    writes: list[str] = []
    real_replace = os.replace

    class Killed(BaseException):
        pass

    for stop in range(3):  # after the vectors' file, at the switch, after it
        def replace(source, target, stop=stop):
            writes.append(str(target))
            if len(writes) > stop:
                raise Killed()
            return real_replace(source, target)

        writes.clear()
        os.replace = replace
        try:
            store.save(tmp_path, store.embed(new_words, {"base": _encoders()["base"]}, "base"))
        except Killed:
            pass
        finally:
            os.replace = real_replace
        loaded = store.load(tmp_path)
        assert loaded is not None and loaded.lexicon.words in (old_words.words, new_words.words)
    store.save(tmp_path, store.embed(new_words, {"base": _encoders()["base"]}, "base"))
    assert store.load(tmp_path).lexicon.words == new_words.words
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([store.LEXICON_CONFIG, store.stored_file(tmp_path).name])
    assert not old_file.exists()


@pytest.mark.parametrize("damage, message", [
    (lambda a: a.update(words_utf8=np.frombuffer(b"do|g" + a["words_utf8"].tobytes()[3:], np.uint8)), "cannot be an option"),
    (lambda a: a["base_scales"].__setitem__(0, np.nan), "scales"),
    (lambda a: a.update(zipf=a["zipf"][:-1]), "frequencies"),
    (lambda a: a.update(gloss_rows=a["gloss_rows"] - 10), "corrupt lexicon"),
])
def test_a_hand_made_lexicon_with_its_hash_recomputed_is_still_checked(tmp_path, damage, message) -> None:
    """A word holding '|' broke `answer`, NaN scales were served, mismatched lengths ended in
    tracebacks: what the arrays hold is checked where they are read, not only their hash."""
    store.build(tmp_path, _lexicon(), _encoders(), "ft")
    path = store.stored_file(tmp_path)
    with np.load(path) as stored:
        arrays = {name: stored[name].copy() for name in stored.files}
    damage(arrays)
    np.savez(path, **arrays)
    config_path = tmp_path / store.LEXICON_CONFIG
    config = json.loads(config_path.read_text())
    config["files"][path.name] = sha256_file(path)
    config_path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match=message):
        store.load(tmp_path)


def test_embedding_a_long_word_list_shows_its_progress(capsys) -> None:
    """A two-million-line list took most of an hour at start-up with nothing said: more than one
    chunk of texts shows a bar (on stderr) naming the encoder; a short list stays quiet."""
    words = tuple(f"word{i}" for i in range(5000))
    store.embed(Lexicon(words, np.zeros(len(words), np.float32), "test"), {"base": _encoders()["base"]}, "base")
    bar = capsys.readouterr().err
    assert "embedding with word-hash-base" in bar and "5000/5000" in bar
    store.embed(_lexicon(), {"base": _encoders()["base"]}, "base")
    assert capsys.readouterr().err == ""


class CountingModel(WordHashModel):
    """The stand-in encoder, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0

    def encode(self, texts, **kwargs):
        self.encoded += len(texts)
        return super().encode(texts, **kwargs)


def test_a_lexicon_is_embedded_once_per_encoder_and_read_back_from_the_cache(tmp_path) -> None:
    """With a cache folder, the same texts by the same encoder are read back (a retrain, or
    vectors embedded ahead while the fold encoders fine-tune); another encoder id, other texts
    or a damaged entry are embedded anew."""
    model = CountingModel()
    encoder = Encoder(model=model, model_id="word-hash-lexicon-cache", cache_dir=tmp_path)
    words = ["sun", "moon", "sea star"]
    first = store.embedded(encoder, words)
    again = store.embedded(encoder, words)
    assert model.encoded == 3
    assert again.texts == tuple(words) and np.array_equal(again.codes, first.codes)
    assert np.array_equal(again.scales, first.scales)
    other = Encoder(model=model, model_id="word-hash-other", cache_dir=tmp_path)
    store.embedded(other, words)
    store.embedded(encoder, words[:2])
    assert model.encoded == 8
    assert len(list((tmp_path / store.CACHE_FOLDER).iterdir())) == 3
    for path in (tmp_path / store.CACHE_FOLDER).iterdir():
        path.write_bytes(b"damaged")
    assert np.array_equal(store.embedded(encoder, words).codes, first.codes) and model.encoded == 11
    assert store.embedded(encoder, words).texts == tuple(words) and model.encoded == 11  # written again
    without = Encoder(model=model, model_id="word-hash-lexicon-cache")
    store.embedded(without, words)
    assert model.encoded == 14 and len(list((tmp_path / store.CACHE_FOLDER).iterdir())) == 3


def test_a_text_that_comes_again_is_embedded_once_and_gets_the_same_bytes() -> None:
    """Synonyms share their WordNet gloss: each distinct text is embedded once, and every copy
    gets the vector it would get embedded alone."""
    model = CountingModel()
    encoder = Encoder(model=model, model_id="word-hash-repeats")
    texts = ["a star", "the sea", "a star", "a fish", "the sea", "a star"]
    vectors = store.embedded(encoder, texts)
    assert model.encoded == 3 and vectors.texts == tuple(texts)
    for i, text in enumerate(texts):
        alone = store.embedded(encoder, [text])
        assert np.array_equal(vectors.codes[i], alone.codes[0]) and vectors.scales[i] == alone.scales[0]
