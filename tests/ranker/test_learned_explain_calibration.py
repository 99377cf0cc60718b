"""The learned ranker's explanations (LightGBM pred_contrib) and its confidence calibration:
fitted on out-of-fold scores by training, saved in the model directory, checked when loaded."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from helpers import SMALL_STOP_ROWS
from pictorank.artifacts import hash_files
from pictorank.errors import ModelError
from pictorank.puzzles import to_queries
from pictorank.query import Query
from pictorank.ranker import load_ranker
from pictorank.ranker.calibration import CALIBRATION_FILE

CLUE = Query(("flower", "sun"), ("sunflower", "hammer", "river"))


@pytest.fixture(scope="module")
def saved(small_learned, tmp_path_factory):
    directory = tmp_path_factory.mktemp("calibrated") / "model"
    small_learned.save(directory)
    return directory


@pytest.fixture(scope="module")
def held_out(vocab, val_puzzles):
    return to_queries(val_puzzles[SMALL_STOP_ROWS : SMALL_STOP_ROWS + 40], vocab)


def test_training_fits_a_calibration_on_out_of_fold_scores(small_learned, held_out):
    calibrator = small_learned.calibrator
    assert calibrator is not None and "out-of-fold" in calibrator.fitted_on and calibrator.rows > 0
    for ranking in small_learned.rank(held_out):
        assert 0.0 <= small_learned.confidence(ranking.scores) <= 1.0
    # a wide margin says more than a narrow one, and 4 options more than 30
    assert small_learned.confidence([2.0, -2.0, -3.0, -3.0]) > small_learned.confidence([2.0, 1.9, -3.0, -3.0])


def test_explanations_are_lightgbm_contributions_that_add_up_to_the_score(small_learned, held_out):
    explained = small_learned.rank(held_out, explain=10)
    assert [(r.options, r.scores) for r in explained] == [(r.options, r.scores) for r in small_learned.rank(held_out)]
    for query, ranking in zip(held_out, explained):
        assert [e.option for e in ranking.explanations] == ranking.options[:10]
        for e, score in zip(ranking.explanations, ranking.scores):
            assert e.hints == tuple(dict.fromkeys(query.hints)) and len(e.pulls) == len(e.hints)  # a repeat once
            assert sum(e.groups.values()) == pytest.approx(score, abs=1e-4)
            assert sum(e.pulls) == pytest.approx(e.groups["similarity"], abs=1e-4)
            assert e.summary


def test_calibration_is_saved_checked_and_loaded(small_learned, saved, tmp_path):
    config = json.loads((saved / "ranker.json").read_text())
    assert CALIBRATION_FILE in config["files"]
    assert load_ranker(saved, encoder=small_learned.encoder).calibrator == small_learned.calibrator

    tampered = tmp_path / "tampered"
    shutil.copytree(saved, tampered)
    data = json.loads((tampered / CALIBRATION_FILE).read_text())
    (tampered / CALIBRATION_FILE).write_text(json.dumps({**data, "intercept": 5.0}))
    with pytest.raises(ModelError, match="corrupt"):
        load_ranker(tampered, encoder=small_learned.encoder)


def test_a_model_trained_without_a_calibration_loads_without_confidence(small_learned, saved, tmp_path):
    """Training saves none when every held-out ranking was right (or every one wrong)."""
    uncalibrated = tmp_path / "uncalibrated"
    shutil.copytree(saved, uncalibrated)
    (uncalibrated / CALIBRATION_FILE).unlink()
    config = json.loads((uncalibrated / "ranker.json").read_text())
    config["files"] = hash_files(uncalibrated, skip="ranker.json")
    (uncalibrated / "ranker.json").write_text(json.dumps(config))
    ranker = load_ranker(uncalibrated, encoder=small_learned.encoder)
    assert ranker.calibrator is None and ranker.confidence([1.0, 0.0]) is None
    assert np.allclose(ranker.score([CLUE])[0], small_learned.score([CLUE])[0])


def test_probability_of_the_first_choice_is_the_sorted_probability(small_learned):
    calibrator = small_learned.calibrator
    scores = [0.3, 2.0, -1.0, 1.5]
    assert calibrator.probability_of(scores, 1) == pytest.approx(calibrator.probability([2.0, 1.5, 0.3, -1.0]))
    assert calibrator.probability_of(scores, 3) < calibrator.probability_of(scores, 1)  # a negative margin


def test_explaining_changes_neither_the_ranking_nor_its_confidence(small_learned, held_out):
    plain = small_learned.rank(held_out[:5])
    explained = small_learned.rank(held_out[:5], explain=3)
    for ranking, ranking2 in zip(plain, explained):
        assert ranking.options == ranking2.options and ranking.confidence == pytest.approx(ranking2.confidence)
        assert ranking.explanations == [] and len(ranking2.explanations) == min(3, len(ranking.options))
        assert 0.0 <= ranking.confidence <= 1.0


EXPLAINED_PUZZLES = 200


def test_every_reason_a_sentence_names_has_a_positive_contribution(small_learned, vocab, val_puzzles):
    """On 200 val puzzles (the held-out slice first), each explanation's sentence agrees with its
    numbers: 'spell it' only with a positive spelling group, 'closest to X' only with a positive
    pull of X, the training clues only with a positive train_clues group."""
    from pictorank.ranker.explain import short_name as _short

    puzzles = (val_puzzles[SMALL_STOP_ROWS:] + val_puzzles[:SMALL_STOP_ROWS])[:EXPLAINED_PUZZLES]
    named = 0
    for query, ranking in zip(to_queries(puzzles, vocab), small_learned.rank(to_queries(puzzles, vocab), explain=10)):
        for e in ranking.explanations:
            if "spell it" in e.summary:
                assert e.groups["spelling"] > 0, e
            if "train clues" in e.summary:
                assert e.groups["train_clues"] > 0, e
            for i, hint in enumerate(query.hints):
                if f"closest to '{_short(hint)}'" in e.summary:
                    assert max(e.pulls) > 0 and e.pulls[int(np.argmax(e.pulls))] > 0, e
                    # the hint named closest is never also shown pulling the word down (a repeated
                    # pictogram, "intensity, intensity", was shown with one pull of each sign)
                    assert all(p >= 0 for h, p in zip(e.hints, e.pulls) if _short(h) == _short(hint)), e
                    named += 1
            assert len(e.hints) == len(set(e.hints)) == len(e.pulls), e
    assert named > 0
