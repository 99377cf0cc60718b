"""LearnedRanker: it learns something, saves and loads faithfully, and refuses broken directories."""

from __future__ import annotations

import copy
import json
import shutil

import numpy as np
import pytest

from helpers import SMALL_STOP_ROWS
from pictorank.encoders import Encoder
from pictorank.evaluation.evaluate import evaluate_rankings
from pictorank.errors import ModelError, NotFittedError
from pictorank.features import FeatureExtractor
from pictorank.puzzles import to_queries
from pictorank.query import Query
from pictorank.ranker import CosineRanker, LearnedRanker, load_ranker
from pictorank.ranker.bag import BoosterBag


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
    learned = evaluate_rankings(held, [r.options for r in small_learned.rank(queries)])["overall"]
    cosine = evaluate_rankings(held, [r.options for r in CosineRanker(encoder).rank(queries)])["overall"]
    assert learned["mrr"] > cosine["mrr"] and learned["hits@1"] > cosine["hits@1"]


def test_scores_one_value_per_option_and_accepts_free_text(small_learned):
    query = Query(("a big yellow star", "daytime"), ("sun", "moon", "lamp"))
    (scores,) = small_learned.score([query])
    assert scores.shape == (3,) and np.isfinite(scores).all()
    [ranking] = small_learned.rank([query])
    assert sorted(ranking.options) == ["lamp", "moon", "sun"] and ranking.scores == sorted(ranking.scores, reverse=True)


def test_save_and_load_give_the_same_scores(small_learned, saved, encoder, vocab, val_puzzles):
    loaded = load_ranker(saved, encoder=small_learned.encoder)  # the encoder it was trained over
    assert loaded.method == "learned" and loaded.feature_names == small_learned.feature_names
    queries = to_queries(val_puzzles[:40], vocab)
    for a, b in zip(small_learned.score(queries), loaded.score(queries)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    config = json.loads((saved / "ranker.json").read_text())
    boosters = [f"model-{i}.txt" for i in range(len(small_learned.booster))]
    assert len(boosters) > 1 and config["params"]["boosters"] == len(boosters)
    assert {*boosters, "pooling.json", "associations.json", "reference.npz", "metadata.json"} <= set(config["files"])


def test_garbled_lightgbm_file_is_refused(saved, tmp_path, encoder):
    target = _copy(saved, tmp_path)
    (target / "model-1.txt").write_text("tree\nnot a model\n")
    with pytest.raises(ModelError, match="model-1.txt"):
        load_ranker(target, encoder=encoder)


def test_directory_from_before_the_bag_is_refused_and_says_retrain(small_learned, tmp_path, encoder):
    """Model directories trained before the bag hold one booster in model.txt and no
    params.boosters, in format 3: the format check refuses them."""
    single = copy.copy(small_learned)
    single.booster = BoosterBag(small_learned.booster.boosters[:1])
    single.save(tmp_path / "old")
    config = json.loads((tmp_path / "old" / "ranker.json").read_text())
    (tmp_path / "old" / "model-0.txt").rename(tmp_path / "old" / "model.txt")
    config["files"]["model.txt"] = config["files"].pop("model-0.txt")
    del config["params"]["boosters"]
    config["versions"]["format"] = 3
    (tmp_path / "old" / "ranker.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"model format 3, .*; retrain the model with `pictorank train`"):
        load_ranker(tmp_path / "old", encoder=encoder)


def test_missing_file_is_refused(saved, tmp_path, encoder):
    target = _copy(saved, tmp_path)
    (target / "reference.npz").unlink()
    with pytest.raises(ModelError, match="missing"):
        load_ranker(target, encoder=encoder)


def test_feature_list_differing_from_the_code_is_refused(saved, tmp_path, encoder):
    target = _copy(saved, tmp_path)
    config = json.loads((target / "ranker.json").read_text())
    config["params"]["feature_names"] = config["params"]["feature_names"][:-1] + ["a_feature_from_elsewhere"]
    (target / "ranker.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="feature list differs"):
        load_ranker(target, encoder=encoder)


def test_missing_finetuned_encoder_is_refused(small_learned, base_model, tmp_path, encoder):
    ranker = copy.copy(small_learned)
    ranker.extractor = copy.copy(small_learned.extractor)
    ranker.extractor.finetuned_encoder = Encoder(model=base_model, model_id="finetuned-test")
    ranker.finetuned_model = base_model
    ranker.save(tmp_path / "ft")
    assert load_ranker(tmp_path / "ft", encoder=encoder).extractor.finetuned_encoder.model_id == "finetuned-test"
    shutil.rmtree(tmp_path / "ft" / "encoder")
    with pytest.raises(ModelError, match="encoder"):
        load_ranker(tmp_path / "ft", encoder=encoder)


def test_unfitted_extractor_says_so(small_learned, encoder):
    ranker = LearnedRanker(FeatureExtractor(encoder), small_learned.booster, small_learned.feature_names)
    with pytest.raises(NotFittedError, match="not fitted"):
        ranker.score([Query(("sun",), ("a", "b"))])


def test_booster_and_feature_names_must_agree(small_learned):
    with pytest.raises(ModelError, match="differ"):
        LearnedRanker(small_learned.extractor, small_learned.booster, small_learned.feature_names[:-1])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["params"].update(num_threads="2"), "num_threads must be an integer"),
        (lambda c: c["params"].update(boosters=0), "boosters must be an integer"),
        (lambda c: c["params"].pop("boosters"), "ranker.json: params.boosters is missing; retrain"),
        (lambda c: c["params"].update(feature_names="base_cos_joined"), "feature_names must be a non-empty list"),
        (lambda c: c.update(params=[]), "'params' must be a JSON object"),
        (lambda c: c.update(encoder="x"), "base encoder"),
        (lambda c: c["files"].update({"../outside.txt": "0" * 64}), "points outside the model directory"),
        (lambda c: c.update(encoder={**c["encoder"], "finetuned": {"dir": "/etc", "model_id": "x"}}), "points outside"),
        (lambda c: c.update(encoder={**c["encoder"], "finetuned": {"dir": 3}}), "encoder.finetuned must be"),
        # a file loading reads by its fixed name, dropped from the hash list, was read unchecked
        (lambda c: c["files"].pop("model-0.txt"), "'model-0.txt' is read but has no file hash"),
        (lambda c: c["files"].pop("reference.npz"), "'reference.npz' is read but has no file hash"),
    ],
)
def test_config_fields_are_checked_one_by_one(saved, tmp_path, encoder, change, message):
    target = _copy(saved, tmp_path)
    config = json.loads((target / "ranker.json").read_text())
    change(config)
    (target / "ranker.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=message):
        load_ranker(target, encoder=encoder)
