"""Encoder: each distinct string encoded once, batched; on-disk cache keyed by model id and text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from helpers import WordHashModel
from pictorank.encoders import Encoder


class StubModel:
    """Stands in for a SentenceTransformer: deterministic unit vectors, and a log of every call."""

    def __init__(self, dimension: int = 8, fail: bool = False) -> None:
        self.dimension = dimension
        self.fail = fail
        self.calls: list[list[str]] = []

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts: list[str], batch_size: int, **kwargs: object) -> np.ndarray:
        if self.fail:
            raise AssertionError(f"the model was asked to encode {texts[:3]}")
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "little")
            vector = np.random.default_rng(seed).normal(size=self.dimension)
            rows.append(vector / np.linalg.norm(vector))
        return np.array(rows, dtype=np.float64)


def test_each_distinct_string_encoded_once() -> None:
    model = StubModel()
    encoder = Encoder(model=model, model_id="stub")
    first = encoder.encode(["a", "b", "a"])
    assert model.calls == [["a", "b"]]
    assert encoder.encoded_count == 2
    second = encoder.encode(["b", "c", "a"])
    assert model.calls == [["a", "b"], ["c"]]
    assert encoder.encoded_count == 3
    assert first.dtype == np.float32 and first.shape == (3, 8)
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_allclose(np.linalg.norm(second, axis=1), 1.0, rtol=1e-6)


def test_warm_sends_distinct_strings_in_one_call() -> None:
    model = StubModel()
    encoder = Encoder(model=model, model_id="stub", batch_size=64)
    texts = [f"t{i % 50}" for i in range(500)]
    encoder.warm(iter(texts))
    assert model.calls == [[f"t{i}" for i in range(50)]]
    encoder.encode(texts)
    assert len(model.calls) == 1


def test_empty_input() -> None:
    model = StubModel()
    assert Encoder(model=model, model_id="stub").encode([]).shape == (0, 8)
    assert model.calls == []


def test_disk_cache_round_trip(tmp_path: Path) -> None:
    first = Encoder(model=StubModel(), model_id="stub-v1", cache_dir=tmp_path)
    vectors = first.encode(["seal", "water, sea", "café"])
    first.flush()
    second_model = StubModel(fail=True)
    second = Encoder(model=second_model, model_id="stub-v1", cache_dir=tmp_path)
    np.testing.assert_array_equal(second.encode(["seal", "water, sea", "café"]), vectors)
    assert second.encoded_count == 0
    assert [p.suffix for p in tmp_path.iterdir()] == [".npz"]  # no temp file left behind


def test_other_model_id_shares_nothing(tmp_path: Path) -> None:
    Encoder(model=StubModel(), model_id="stub-v1", cache_dir=tmp_path).warm(["seal"])
    model = StubModel()
    other = Encoder(model=model, model_id="stub-v2", cache_dir=tmp_path)
    other.warm(["seal"])
    assert model.calls == [["seal"]]
    assert len(list(tmp_path.glob("*.npz"))) == 2


@pytest.mark.parametrize("content", [b"not a zip at all", b"PK\x03\x04 truncated zip", b""])
def test_corrupt_cache_file_is_re_encoded(tmp_path: Path, content: bytes) -> None:
    Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path).warm(["seal"])
    (cache_file,) = tmp_path.glob("*.npz")
    cache_file.write_bytes(content)
    model = StubModel()
    encoder = Encoder(model=model, model_id="stub", cache_dir=tmp_path)
    encoder.warm(["seal"])
    assert model.calls == [["seal"]]
    assert Encoder(model=StubModel(fail=True), model_id="stub", cache_dir=tmp_path).encode(["seal"]).shape == (1, 8)


def test_real_model_disk_cache(base_model: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["animal; water mammal; hair", "seal", "sunflower"]
    first = Encoder(model=base_model, model_id="real", cache_dir=tmp_path)
    vectors = first.encode(texts)
    first.flush()
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])  # seal is the clue's answer
    monkeypatch.setattr(base_model, "encode", StubModel(fail=True).encode)  # the same model, which must not run
    second = Encoder(model=base_model, model_id="real", cache_dir=tmp_path)
    np.testing.assert_array_equal(second.encode(texts), vectors)
    assert second.encoded_count == 0


def test_encode_never_writes_the_disk_cache_flush_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's requests must not stall on rewriting the cache file: only flush (or warm) saves."""
    saves = []
    original = Encoder._save_disk_cache
    monkeypatch.setattr(Encoder, "_save_disk_cache", lambda self: (saves.append(len(self._vectors)), original(self)))
    encoder = Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path)
    texts = [f"t{i}" for i in range(400)]
    for text in texts:
        encoder.encode([text])
    assert saves == [] and list(tmp_path.iterdir()) == []
    encoder.flush()
    encoder.flush()  # nothing new: no second write
    assert saves == [400]
    assert Encoder(model=StubModel(fail=True), model_id="stub", cache_dir=tmp_path).encode(texts).shape == (400, 8)


def test_memory_is_bounded_least_recently_used_first() -> None:
    model = StubModel()
    encoder = Encoder(model=model, model_id="stub", max_cached=3)
    encoder.encode(["a", "b", "c"])
    encoder.encode(["a"])  # a is now the most recently used
    encoder.encode(["d"])  # b goes
    assert list(encoder._vectors) == ["c", "a", "d"]
    encoder.encode(["b"])
    assert model.calls[-1] == ["b"]
    wide = encoder.encode([f"w{i}" for i in range(10)])  # one call larger than the memory
    assert wide.shape == (10, 8) and len(encoder._vectors) == 3


def test_disk_cache_stores_texts_at_their_own_length(tmp_path: Path) -> None:
    """One very long option used to widen every stored text to its length."""
    encoder = Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path)
    encoder.warm([f"word {i}" for i in range(2000)])
    (cache_file,) = tmp_path.glob("*.npz")
    small = cache_file.stat().st_size
    encoder.warm(["x" * 20_000])
    assert cache_file.stat().st_size < small + 30_000
    reloaded = Encoder(model=StubModel(fail=True), model_id="stub", cache_dir=tmp_path)
    assert reloaded.encode(["x" * 20_000, "word 7", "word 1999"]).shape == (3, 8)


def test_max_cached_strings_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from pictorank.errors import SettingsError
    from pictorank.settings import DEFAULT_MAX_CACHED_STRINGS, CommonSettings, read_settings

    monkeypatch.delenv("PICTORANK_MAX_CACHED_STRINGS", raising=False)
    assert read_settings(CommonSettings).max_cached_strings == DEFAULT_MAX_CACHED_STRINGS
    assert Encoder(model=StubModel(), model_id="stub").max_cached == DEFAULT_MAX_CACHED_STRINGS
    monkeypatch.setenv("PICTORANK_MAX_CACHED_STRINGS", "1200")
    assert read_settings(CommonSettings).max_cached_strings == 1200
    for bad in ("0", "-5", "many", "\u0665", "9" * 5000):
        monkeypatch.setenv("PICTORANK_MAX_CACHED_STRINGS", bad)
        with pytest.raises(SettingsError, match="PICTORANK_MAX_CACHED_STRINGS"):
            read_settings(CommonSettings)


def test_a_cache_that_cannot_be_saved_is_a_warning_not_the_end_of_the_run(tmp_path, caplog) -> None:
    encoder = Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path / "gone" / "cache")
    encoder.encode(["a", "b"])
    (tmp_path / "gone").write_text("a file now stands where the cache's folder was to be made")
    with caplog.at_level("WARNING", logger="pictorank.encoders"):
        encoder.flush()
    assert "could not save the embedding cache" in caplog.text
    assert [p.name for p in tmp_path.iterdir()] == ["gone"]


def test_stored_vectors_come_back_close_to_the_vectors_quantised() -> None:
    from pictorank.encoders import StoredVectors

    texts = ["zebra", "horse", "snow"]
    vectors = WordHashModel(dimension=384).encode(texts)
    stored = StoredVectors.quantize(texts, vectors)
    assert stored.codes.dtype == np.int8 and len(stored) == 3 and "horse" in stored and "cat" not in stored
    assert stored.get("cat") is None
    for text, vector in zip(texts, vectors):
        got = stored.get(text)
        assert got.dtype == np.float32 and abs(np.linalg.norm(got) - 1) < 1e-5
        assert float(got @ vector) > 0.9999
    np.testing.assert_allclose(stored.all(), np.stack([stored.get(t) for t in texts]), atol=1e-6)
    with pytest.raises(ValueError, match="3 texts need int8 codes"):
        StoredVectors(texts, stored.codes.astype(np.int16), stored.scales)


def test_an_encoder_reads_vectors_it_knows_instead_of_encoding_them() -> None:
    from pictorank.encoders import StoredVectors

    encoder = Encoder(model=WordHashModel(), model_id="word-hash-known")
    known = StoredVectors.quantize(["zebra", "horse"], WordHashModel().encode(["zebra", "horse"]))
    encoder.know(known)
    vectors = encoder.encode(["zebra", "snow", "horse"])
    assert encoder.encoded_count == 1  # only snow went through the model
    np.testing.assert_allclose(vectors[0], known.get("zebra"))
    np.testing.assert_allclose(vectors[1], WordHashModel().encode(["snow"])[0], atol=1e-6)
    encoder.encode(["zebra", "horse"])
    assert encoder.encoded_count == 1


def test_stored_vectors_are_looked_up_many_at_once_with_the_missing_ones_marked() -> None:
    from pictorank.encoders import StoredVectors

    vectors = np.array([[3.0, 4.0], [0.0, -2.0]], np.float32)
    stored = StoredVectors.quantize(["a", "b"], vectors)
    found_vectors, found = stored.lookup(["b", "zzz", "a"])
    assert found.tolist() == [True, False, True]
    np.testing.assert_allclose(found_vectors[0], stored.get("b"), atol=1e-6)
    np.testing.assert_allclose(found_vectors[2], [0.6, 0.8], atol=0.01)
    assert found_vectors[1].tolist() == [0.0, 0.0]


def test_a_stored_vector_has_the_same_bits_looked_up_alone_or_with_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """An encoder reads the vectors it knows a list at a time (in chunks): each must be the
    vector `get` gives it alone, to the last bit (a model's features must not depend on what
    was asked with)."""
    from pictorank.encoders import StoredVectors, stored as stored_module

    monkeypatch.setattr(stored_module, "_LOOKUP_ROWS", 7)

    rng = np.random.default_rng(3)
    texts = [f"word {i}" for i in range(500)]
    stored = StoredVectors.quantize(texts, rng.normal(size=(500, 384)).astype(np.float32))
    asked = [texts[i] for i in rng.permutation(500)[:300]]
    vectors, found = stored.lookup(asked + ["not stored"])
    assert found.tolist() == [True] * 300 + [False] and not vectors[-1].any()
    assert all(np.array_equal(vectors[i], stored.get(text)) for i, text in enumerate(asked))
    encoder = Encoder(model=WordHashModel(), model_id="word-hash-known-bits")
    encoder.know(stored)
    assert np.array_equal(encoder.encode(asked), np.stack([stored.get(t) for t in asked]))
    assert encoder.encoded_count == 0


def test_vectors_a_model_folder_ships_win_over_the_memo_and_the_cache(tmp_path: Path) -> None:
    """A lexicon word has the folder's vector whatever a process encoded or cached before: the
    same model folder then ranks alike in every process."""
    from pictorank.encoders import StoredVectors

    first = Encoder(model=WordHashModel(), model_id="word-hash-known", cache_dir=tmp_path)
    first.encode(["zebra"])
    first.flush()
    known = StoredVectors.quantize(["zebra"], WordHashModel().encode(["zebra"]))
    second = Encoder(model=WordHashModel(), model_id="word-hash-known", cache_dir=tmp_path)
    second.know(known)
    assert np.array_equal(second.encode(["zebra"])[0], known.get("zebra"))
    assert not np.array_equal(first.encode(["zebra"])[0], known.get("zebra"))  # int8 codes: not the float


def test_a_cache_made_another_way_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry records the model, the runtime (the model's class) and how strings were fed
    (CACHE_FORMAT): vectors of batched runs or of another runtime are never reused."""
    import pictorank.encoders.memo as memo

    Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path).warm(["seal"])
    monkeypatch.setattr(memo, "CACHE_FORMAT", "another-format")
    model = StubModel()
    Encoder(model=model, model_id="stub", cache_dir=tmp_path).warm(["seal"])
    assert model.calls == [["seal"]]

    class OtherRuntime(StubModel):
        pass

    other = OtherRuntime()
    Encoder(model=other, model_id="stub", cache_dir=tmp_path).warm(["seal"])
    assert other.calls == [["seal"]]


def test_unsound_cache_entries_are_encoded_again(tmp_path: Path) -> None:
    """NaN or not unit-length vectors in the cache are dropped and recomputed, never served."""
    encoder = Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path)
    encoder.warm(["seal", "otter", "whale"])
    (path,) = tmp_path.glob("*.npz")
    with np.load(path) as stored:
        arrays = dict(stored)
    arrays["vectors"][0] = np.nan
    arrays["vectors"][1] *= 3
    np.savez(path, **arrays)
    model = StubModel()
    again = Encoder(model=model, model_id="stub", cache_dir=tmp_path)
    vectors = again.encode(["seal", "otter", "whale"])
    assert model.calls == [["seal", "otter"]]
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_a_fifo_in_place_of_the_cache_file_is_not_read(tmp_path: Path) -> None:
    import os

    encoder = Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path)
    os.mkfifo(encoder._cache_file())
    model = StubModel()
    assert Encoder(model=model, model_id="stub", cache_dir=tmp_path).encode(["seal"]).shape == (1, 8)


def test_a_save_removes_what_a_killed_save_left(tmp_path: Path) -> None:
    """A SIGKILL mid-save left `<cache>.<pid>.tmp.npz` beside the cache, never cleaned."""
    encoder = Encoder(model=StubModel(), model_id="stub", cache_dir=tmp_path)
    path = encoder._cache_file()
    dead = path.with_name(f"{path.stem}.999999999.tmp.npz")  # no such process
    dead.write_bytes(b"half a file")
    living = path.with_name(f"{path.stem}.1.tmp.npz")  # pid 1 lives
    living.write_bytes(b"another writer's")
    encoder.warm(["seal"])
    assert not dead.exists() and living.exists() and path.exists()


def test_an_export_removes_a_staging_folder_a_killed_export_left(tmp_path: Path) -> None:
    """A SIGKILL mid-export left a 47 MB `.<name>.*` staging folder in the cache for good; one
    older than an export can take is removed by the next export of that name, a young one stays."""
    import os
    import time

    from pictorank.encoders.onnx import STALE_STAGING_SECONDS, _remove_stale_staging

    old, young = tmp_path / ".base+int8.abc", tmp_path / ".base+int8.def"
    for folder in (old, young):
        folder.mkdir()
        (folder / "model.fp32.onnx").write_bytes(b"x" * 10)
    then = time.time() - STALE_STAGING_SECONDS - 60
    os.utime(old, (then, then))
    _remove_stale_staging(tmp_path, "base+int8")
    assert not old.exists() and young.exists()


def test_a_cache_of_another_width_is_not_read(tmp_path: Path) -> None:
    """Wrong-shape vectors in the cache ended `predict` in a traceback: they are encoded again."""
    Encoder(model=StubModel(dimension=8), model_id="stub", cache_dir=tmp_path).warm(["seal"])
    (path,) = tmp_path.glob("*.npz")
    with np.load(path) as stored:
        arrays = dict(stored)
    vectors = np.zeros((1, 5), np.float32)
    vectors[0, 0] = 1.0
    np.savez(path, **{**arrays, "vectors": vectors})
    model = StubModel(dimension=8)
    assert Encoder(model=model, model_id="stub", cache_dir=tmp_path).encode(["seal"]).shape == (1, 8)
    assert model.calls == [["seal"]]


def test_a_cache_of_another_width_is_not_read_before_the_base_model_loads(tmp_path: Path) -> None:
    """The base encoder loads its model only when it meets a new string: a cache of another width
    was kept until then, and stacking its vectors with fresh ones ended in a traceback."""
    from pictorank.encoders import base_model_version
    from pictorank.encoders.memo import BASE_DIMENSION

    lazy = Encoder(model_id=base_model_version(), cache_dir=tmp_path)
    stub = Encoder(model=StubModel(dimension=5), model_id="stub", cache_dir=tmp_path)
    stub.warm(["seal"])
    (written,) = tmp_path.glob("*.npz")
    with np.load(written) as stored:
        arrays = dict(stored)
    np.savez(lazy._cache_file(), **{**arrays, "key": np.array(lazy.cache_key)})
    again = Encoder(model_id=base_model_version(), cache_dir=tmp_path)
    assert again._model is None and "seal" not in again._vectors  # refused, and nothing loaded to refuse it
    good = np.zeros((1, BASE_DIMENSION), np.float32)
    good[0, 0] = 1.0
    np.savez(lazy._cache_file(), **{**arrays, "key": np.array(lazy.cache_key), "vectors": good})
    assert "seal" in Encoder(model_id=base_model_version(), cache_dir=tmp_path)._vectors


def test_a_folders_exact_vectors_win_over_its_int8_ones() -> None:
    """A word both in the shipped vocabulary (float32) and in the lexicon (int8 codes) reads the
    exact vector, whichever was handed over first."""
    from pictorank.encoders import StoredVectors

    exact = WordHashModel().encode(["snow"]).astype(np.float32)
    encoder = Encoder(model=WordHashModel(), model_id="word-hash-known")
    encoder.know(StoredVectors.quantize(["snow"], exact))
    encoder.preload(["snow"], exact)
    assert np.array_equal(encoder.encode(["snow"])[0], exact[0]) and encoder.encoded_count == 0
