"""The learned ranker's blend towards plain cosine for clues of an unseen vocabulary, and
models trained before it (no fallback flag) refused."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from pictorank.errors import ModelError
from pictorank.query import Query
from pictorank.ranker import load_ranker
from pictorank.ranker.fallback import blend_rows, blend_towards_cosine


def _z(x):
    x = np.asarray(x, dtype=float)
    return (x - x.mean()) / (x.std() + 1e-9)


def _blend(learned, cosine, weight):
    """The z-score sum of the two experts, mapped back to the learned scores' mean and spread."""
    learned = np.asarray(learned, dtype=float)
    return learned.mean() + learned.std() * (_z(learned) + weight * _z(cosine))


def test_a_clue_of_the_training_vocabulary_keeps_the_learned_scores():
    learned = np.array([0.3, -1.2, 2.0])
    np.testing.assert_array_equal(blend_towards_cosine(learned, np.array([0.9, 0.1, 0.2]), known=1.0), learned)


def test_an_unseen_vocabulary_weighs_both_experts_equally():
    learned, cosine = np.array([3.0, 1.0, 0.0]), np.array([0.1, 0.9, 0.5])
    np.testing.assert_allclose(blend_towards_cosine(learned, cosine, known=0.0), _blend(learned, cosine, 1.0), atol=1e-8)
    np.testing.assert_allclose(blend_towards_cosine(learned, cosine, known=0.75), _blend(learned, cosine, 0.25), atol=1e-8)
    # cosine can overturn the learned order only when the clue is unfamiliar enough
    assert np.argmax(blend_towards_cosine(learned, cosine, known=0.0)) != np.argmax(learned)


def test_a_blended_row_keeps_the_learned_scores_units():
    """The confidence calibration reads top score and margin in LightGBM's units: a blend where
    both experts agree must not change them beyond what the cosine adds, and the mean stays."""
    learned, cosine = np.array([2.0, 0.5, -1.0]), np.array([0.8, 0.3, 0.1])
    out = blend_towards_cosine(learned, cosine, known=0.0)
    assert out.mean() == pytest.approx(learned.mean())
    assert np.array_equal(np.argsort(-out), np.argsort(-(_z(learned) + _z(cosine))))
    assert out.std() == pytest.approx(learned.std() * (_z(learned) + _z(cosine)).std())


def test_rows_are_blended_one_by_one_and_single_options_are_left_alone():
    learned = [np.array([1.0, 0.0]), np.array([5.0]), np.array([0.0, 2.0, 1.0])]
    cosine = np.array([0.0, 1.0, 0.3, 0.9, 0.1, 0.2])
    known = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    out = blend_rows(learned, cosine, known)
    np.testing.assert_allclose(out[0], _blend([1.0, 0.0], [0.0, 1.0], 1.0), atol=1e-8)
    np.testing.assert_array_equal(out[1], [5.0])
    np.testing.assert_array_equal(out[2], learned[2])


def test_the_ranker_blends_only_clues_train_never_saw(small_learned):
    on, off = copy.copy(small_learned), copy.copy(small_learned)
    on.fallback, off.fallback = True, False
    bliss = Query(("animal", "water, sea, ocean"), ("seal", "hammer", "tulip"))  # descriptions of train
    table = small_learned.extractor.transform([bliss])
    if table["fam_hints_known"].iloc[0] == 1.0:
        np.testing.assert_array_equal(on.score([bliss])[0], off.score([bliss])[0])
    emoji = Query(("money-mouth face", "chart increasing"), ("big business", "dry land", "cozy room"))
    table = small_learned.extractor.transform([emoji])
    assert table["fam_hints_known"].iloc[0] == 0.0
    expected = _blend(off.score([emoji])[0], table["base_cos_joined"].to_numpy(), 1.0)
    np.testing.assert_allclose(on.score([emoji])[0], expected, rtol=1e-5, atol=1e-6)


def test_the_flag_is_saved_and_checked(small_learned, tmp_path, encoder):
    ranker = copy.copy(small_learned)
    ranker.fallback = True
    ranker.save(tmp_path / "m")
    config = json.loads((tmp_path / "m" / "ranker.json").read_text())
    assert config["params"]["fallback"] is True
    assert load_ranker(tmp_path / "m", encoder=encoder).fallback is True
    config["params"]["fallback"] = "yes"
    (tmp_path / "m" / "ranker.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="fallback must be true or false"):
        load_ranker(tmp_path / "m", encoder=encoder)


def test_a_model_from_before_issue_10_is_refused_and_says_retrain(small_learned, tmp_path, encoder):
    """Its ranker.json has no fallback flag: as format 3 the format check refuses it, and a
    format-4 config without the flag names the missing field."""
    small_learned.save(tmp_path / "old")
    path = tmp_path / "old" / "ranker.json"
    config = json.loads(path.read_text())
    del config["params"]["fallback"]
    path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"ranker.json: params.fallback is missing; retrain the model"):
        load_ranker(tmp_path / "old", encoder=encoder)
    config["versions"]["format"] = 3
    path.write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"ranker.json: model format 3, .*; retrain the model with `pictorank train`"):
        load_ranker(tmp_path / "old", encoder=encoder)


def test_a_blended_rows_confidence_mixes_both_experts_calibrations():
    from pictorank.ranker.calibration import Calibrator
    from pictorank.ranker.fallback import blended_confidence

    lightgbm = Calibrator((1.0, 2.0, -0.5), 0.0)
    cosine = Calibrator((5.0, 20.0, -1.0), -2.0)
    learned, cos = np.array([2.0, 0.0, -1.0]), np.array([0.2, 0.6, 0.1])
    alone = lightgbm.probability([2.0, 0.0, -1.0])
    assert blended_confidence(learned, cos, 1.0, 0, lightgbm, cosine) == pytest.approx(alone)
    # option 0 is LightGBM's choice but not cosine's: cosine's part is its (low) belief in option 0
    from_cosine = cosine.probability([0.2, 0.6, 0.6])
    assert from_cosine < cosine.probability([0.6, 0.2, 0.1])
    assert blended_confidence(learned, cos, 0.0, 0, lightgbm, cosine) == pytest.approx(0.5 * alone + 0.5 * from_cosine)
    assert blended_confidence(learned, cos, 0.75, 0, lightgbm, cosine) == pytest.approx((alone + 0.25 * from_cosine) / 1.25)
    assert blended_confidence(learned, cos, 0.0, 0, lightgbm, None) == pytest.approx(alone)


def test_an_unseen_vocabulary_gets_the_mixed_confidence_and_a_bliss_clue_lightgbms(small_learned):
    from pictorank.ranker.calibration import shipped_calibrator

    ranker = copy.copy(small_learned)
    ranker.fallback, ranker.cosine_calibrator = True, shipped_calibrator("cosine")
    emoji = Query(("money-mouth face", "chart increasing"), ("big business", "dry land", "cozy room"))
    [ranking] = ranker.rank([emoji])
    scores, confidence = ranking.scores, ranking.confidence
    table = ranker.extractor.transform([emoji])
    raw = ranker.booster.predict(table[ranker.feature_names].to_numpy())
    chosen = emoji.options.index(ranking.options[0])
    expected = 0.5 * ranker.calibrator.probability_of(raw, chosen) + \
        0.5 * ranker.cosine_calibrator.probability_of(table["base_cos_joined"].to_numpy(), chosen)
    assert confidence == pytest.approx(expected)
    assert confidence != pytest.approx(ranker.confidence(scores))  # not LightGBM's reading of blended scores


def test_only_a_blended_row_explains_what_the_blend_added(small_learned, train_puzzles, vocab):
    """A clue of the training vocabulary keeps LightGBM's score exactly and gets no
    `unseen_vocabulary` group (it got one of -0.0: float rounding of the groups' sum); an emoji
    clue's group is what the blend added, so the groups still add up to the score."""
    from pictorank.puzzles import to_queries

    ranker = copy.copy(small_learned)
    ranker.fallback = True
    [bliss] = to_queries(train_puzzles[:1], vocab)
    emoji = Query(("money-mouth face", "chart increasing"), ("big business", "dry land", "cozy room"))
    bliss_ranking, emoji_ranking = ranker.rank([bliss, emoji], explain=3)
    bliss_explained, emoji_scores, emoji_explained = \
        bliss_ranking.explanations, emoji_ranking.scores, emoji_ranking.explanations
    assert all("unseen_vocabulary" not in e.groups for e in bliss_explained)
    for explanation, score in zip(emoji_explained, emoji_scores):
        assert abs(explanation.groups["unseen_vocabulary"]) > 1e-3
        assert sum(explanation.groups.values()) == pytest.approx(score, abs=1e-6)
