"""The clue model's parts that need no encoder (the fitted model is tested in test_suggester.py)."""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

from pictorank.errors import ModelError
from pictorank.query import Query
from pictorank.suggest.model import Clue, ClueModel, Memory


def test_the_main_idea_probe_learns_many_main_ideas_from_few_words_without_warnings() -> None:
    # A small vocabulary's train clues (63 ELCo phrases) give nearly one main idea per word, which
    # scikit-learn reports as "could be a regression"; the CLI must not print that to users.
    clues = [Clue(f"word {i}", (i % 20, 20)) for i in range(30)]  # 20 main ideas, 30 words
    vectors = np.random.default_rng(0).normal(size=(30, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        memory = Memory(clues, vectors, size=21, probe_c=10.0, neighbours=5, temperature=0.05).fit_probe()
    log_p = memory.probe_log_probability(vectors[:3])
    assert log_p.shape == (3, 21)
    assert list(log_p.argmax(1)) == [0, 1, 2]  # each word's own main idea, learned


class _RandomEncoder:
    """Unit vectors by hashing: enough for a fit to start, and no model to load."""

    model_id = "random-test-encoder"

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        vectors = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=16) for t in texts])
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_too_few_answers_to_learn_from_says_how_many_are_needed() -> None:
    descriptions = ["cat", "dog", "house", "sun"]
    queries = [Query(("cat", "house"), ("a", "b"), answer) for answer in ("kitten", "kennel", "cattery")]
    with pytest.raises(ModelError, match=r"3 clues of 3 different answers; .* at least 10 different answers"):
        ClueModel(_RandomEncoder(), folds=5).fit(queries, descriptions)  # type: ignore[arg-type]


def _small_fit(encoder: _RandomEncoder) -> tuple[ClueModel, list[Query], list[str]]:
    """A clue model fitted in a moment: hashed vectors, two folds, a few trees, no tower."""
    descriptions = [f"picture {i}" for i in range(12)]
    queries = [Query((descriptions[i % 12], descriptions[(i * 5 + 1) % 12]), ("a", "b"), f"answer {i}")
               for i in range(24)]
    model = ClueModel(encoder, folds=2, trees=5, tower_epochs=0, glosses=False)  # type: ignore[arg-type]
    return model.fit(queries, descriptions), queries, descriptions


@pytest.mark.parametrize("damaged", ["clue_model.npz", "clue_model.json"])
def test_a_damaged_clue_model_file_is_refused_naming_it(tmp_path, damaged: str) -> None:
    """A clue model file changed after it was saved loaded silently (or was silently refitted)."""
    import json

    model, _, _ = _small_fit(_RandomEncoder())
    model.save(tmp_path / "model", key="k")
    ClueModel.load(tmp_path / "model", _RandomEncoder())  # type: ignore[arg-type]
    path = tmp_path / "model" / damaged
    if damaged.endswith(".json"):  # still valid JSON, one clue's answer changed
        config = json.loads(path.read_text())
        config["clues"][0][0] = "tampered"
        path.write_text(json.dumps(config))
    else:
        arrays = dict(np.load(path))
        arrays["clue_vectors"] = arrays["clue_vectors"][::-1].copy()
        np.savez(path, **arrays)
    with pytest.raises(ModelError, match=rf"{damaged}: corrupt \(sha256 differs"):
        ClueModel.load(tmp_path / "model", _RandomEncoder())  # type: ignore[arg-type]


def test_a_clue_model_file_outside_its_folder_is_refused(tmp_path) -> None:
    import json

    from pictorank.suggest.model import _config_digest

    model, _, _ = _small_fit(_RandomEncoder())
    model.save(tmp_path / "model", key="k")
    path = tmp_path / "model" / "clue_model.json"
    config = json.loads(path.read_text())
    config["files"]["../elsewhere.npz"] = config["files"]["clue_model.npz"]
    config["sha256"] = _config_digest(config)
    path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match="points outside the model directory"):
        ClueModel.load(tmp_path / "model", _RandomEncoder())  # type: ignore[arg-type]


def test_a_damaged_shipped_fit_is_refused_in_the_log_and_the_clues_fitted_anew(
        tmp_path, caplog: pytest.LogCaptureFixture) -> None:
    """A service whose model folder holds a damaged clue model keeps /suggest working on a fit of
    its own (the cache's, or a new one) and says in the log which file it refused."""
    from pictorank.suggest.model import fit_or_load, fitted_key

    encoder = _RandomEncoder()
    model, queries, descriptions = _small_fit(encoder)
    params = {"folds": 2, "trees": 5, "tower_epochs": 0, "glosses": False}
    shipped = tmp_path / "model"
    model.save(shipped, fitted_key(ClueModel(encoder, **params), queries, descriptions))  # type: ignore[arg-type]
    arrays = shipped / "clue_model.npz"
    arrays.write_bytes(arrays.read_bytes().replace(b"\x00", b"\x01", 1))
    served = fit_or_load(queries, descriptions, encoder, tmp_path / "cache", shipped=shipped, **params)  # type: ignore[arg-type]
    assert served.clues_ == model.clues_
    assert "refusing the clue model in" in caplog.text and "clue_model.npz: corrupt" in caplog.text
    assert len(list((tmp_path / "cache" / "suggest").iterdir())) == 1  # fitted anew, into the cache


@pytest.mark.parametrize("classes", [2, 5])
def test_a_saved_probe_gives_scikit_learns_probabilities_without_it(classes: int) -> None:
    """A service reads the main-idea probe without scikit-learn (and so without scipy): its
    probabilities are scikit-learn's to the last bits, for two classes and for many."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from pictorank.suggest.model import Probe

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 8))
    y = rng.integers(0, classes, size=60) * 3  # labels need not be 0..n-1
    fitted = LogisticRegression(C=10.0, max_iter=3000).fit(X, y)
    probe = Probe(fitted.coef_, fitted.intercept_, fitted.classes_)
    queries = rng.normal(size=(20, 8))
    np.testing.assert_allclose(probe.predict_proba(queries), fitted.predict_proba(queries), rtol=0, atol=1e-12)
