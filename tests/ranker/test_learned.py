"""LearnedRanker: it learns something, saves and loads faithfully, and refuses broken directories."""

from __future__ import annotations

import copy
import json
import shutil

import numpy as np
import pytest

from helpers import SMALL_STOP_ROWS
from pictorank.encoder import Encoder
from pictorank.evaluation.evaluate import evaluate_rankings
from pictorank.errors import ModelError
from pictorank.puzzles import to_queries
from pictorank.query import Query
from pictorank.ranker import CosineRanker, load_ranker


@pytest.fixture(scope="module")
def saved(small_learned, tmp_path_factory):
    directory = tmp_path_factory.mktemp("learned") / "model"
    small_learned.save(directory, metadata={"note": "test"})
    return directory


def _copy(saved, tmp_path):
    target = tmp_path / "model"
    shutil.copytree(saved, target)
    return target


def test_learned_beats_cosine_on_held_out_val(small_learned, encoder, vocab, val_puzzles):
    held = val_puzzles[SMALL_STOP_ROWS:]
    queries = to_queries(held, vocab)
    learned = evaluate_rankings(held, small_learned.rank(queries))["overall"]
    cosine = evaluate_rankings(held, CosineRanker(encoder).rank(queries))["overall"]
    assert learned["mrr"] > cosine["mrr"] and learned["hits@1"] > cosine["hits@1"]


def test_scores_one_value_per_option_and_accepts_free_text(small_learned):
    query = Query(("a big yellow star", "daytime"), ("sun", "moon", "lamp"))
    (scores,) = small_learned.score([query])
    assert scores.shape == (3,) and np.isfinite(scores).all()
    ranked, values = small_learned.rank_with_scores([query])[0]
    assert sorted(ranked) == ["lamp", "moon", "sun"] and values == sorted(values, reverse=True)


def test_save_and_load_give_the_same_scores(small_learned, saved, encoder, vocab, val_puzzles):
    loaded = load_ranker(saved, encoder=encoder)
    assert loaded.method == "learned" and loaded.feature_names_ == small_learned.feature_names_
    queries = to_queries(val_puzzles[:40], vocab)
    for a, b in zip(small_learned.score(queries), loaded.score(queries)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    config = json.loads((saved / "ranker.json").read_text())
    assert {"model.txt", "features.json", "pooling.json", "metadata.json"} <= set(config["files"])


def test_garbled_lightgbm_file_is_refused(saved, tmp_path, encoder):
    target = _copy(saved, tmp_path)
    (target / "model.txt").write_text("tree\nnot a model\n")
    with pytest.raises(ModelError, match="model.txt"):
        load_ranker(target, encoder=encoder)


def test_missing_file_is_refused(saved, tmp_path, encoder):
    target = _copy(saved, tmp_path)
    (target / "reference.npz").unlink()
    with pytest.raises(ModelError, match="missing"):
        load_ranker(target, encoder=encoder)


def test_feature_list_differing_from_the_code_is_refused(saved, tmp_path, encoder):
    target = _copy(saved, tmp_path)
    config = json.loads((target / "ranker.json").read_text())
    features = json.loads((target / "features.json").read_text())[:-1] + ["a_feature_from_elsewhere"]
    (target / "features.json").write_text(json.dumps(features))
    config["files"]["features.json"] = __import__("hashlib").sha256((target / "features.json").read_bytes()).hexdigest()
    config["feature_names"] = features
    (target / "ranker.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="feature list differs"):
        load_ranker(target, encoder=encoder)


def test_missing_finetuned_encoder_is_refused(small_learned, base_model, tmp_path, encoder):
    ranker = copy.copy(small_learned)
    ranker.extractor_ = copy.copy(small_learned.extractor_)
    ranker.extractor_.finetuned_encoder = Encoder(model=base_model, model_id="finetuned-test")
    ranker.finetuned_model_ = base_model
    ranker.save(tmp_path / "ft")
    assert load_ranker(tmp_path / "ft", encoder=encoder).extractor_.finetuned_encoder.model_id == "finetuned-test"
    shutil.rmtree(tmp_path / "ft" / "encoder")
    with pytest.raises(ModelError, match="encoder"):
        load_ranker(tmp_path / "ft", encoder=encoder)


def test_unfitted_ranker_says_so(encoder):
    from pictorank.ranker import LearnedRanker

    with pytest.raises(RuntimeError, match="not fitted"):
        LearnedRanker(encoder).score([Query(("sun",), ("a", "b"))])
