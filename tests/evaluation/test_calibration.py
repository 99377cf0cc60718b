"""Expected calibration error and the Platt calibrator's inputs, file format and fitting."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pictorank.errors import ModelError
from pictorank.evaluation.calibration import expected_calibration_error, reliability_bins
from pictorank.ranker.calibration import SHIPPED_DIR, Calibrator, ranking_features, shipped_calibrator
from pictorank.train.calibrate import first_is_right, fit_calibrator


def test_ece_of_hand_computed_cases():
    assert expected_calibration_error([0.9] * 10, [True] * 9 + [False]) == pytest.approx(0.0)
    assert expected_calibration_error([0.9] * 10, [True] * 5 + [False] * 5) == pytest.approx(0.4)
    # two bins, each half of the rows: |0.25 - 0| and |0.75 - 1|
    assert expected_calibration_error([0.25, 0.25, 0.75, 0.75], [False, False, True, True]) == pytest.approx(0.25)
    assert [b.count for b in reliability_bins([0.0, 1.0, 0.95], [False, True, True])] == [1, 2]  # 1.0 in the last bin


def test_ranking_features():
    assert ranking_features([0.9, 0.6, 0.1, 0.0]) == pytest.approx([0.9, 0.3, math.log(4)])
    assert ranking_features([0.5]) == [0.5, 0.0, 0.0]


def test_calibrator_round_trips_and_refuses_damage(tmp_path):
    calibrator = Calibrator((1.0, 2.0, -0.5), 0.1, "test", 10, 0.5)
    calibrator.save(tmp_path / "c.json")
    assert Calibrator.load(tmp_path / "c.json") == calibrator
    z = 0.1 + 1.0 * 0.9 + 2.0 * 0.3 - 0.5 * math.log(4)
    assert calibrator.probability([0.9, 0.6, 0.1, 0.0]) == pytest.approx(1 / (1 + math.exp(-z)))
    assert calibrator.probability([]) is None
    for damage in ({"coef": [1, 2]}, {"coef": [1, "x", 3]}, {"kind": "isotonic"}, {"intercept": float("nan")}):
        (tmp_path / "bad.json").write_text(json.dumps({**calibrator.to_json(), **damage}))
        with pytest.raises(ModelError, match="bad.json"):
            Calibrator.load(tmp_path / "bad.json")


def test_a_single_option_is_the_answer_for_certain():
    """The answer is always among the options: with one left (a one-option request, or all others
    excluded) the first is right, whatever a margin of 0 would say in the fit."""
    calibrator = Calibrator((1.0, 2.0, -0.5), -3.0)
    assert calibrator.probability([0.2]) == 1.0 and calibrator.probability_of([0.2], 0) == 1.0
    assert calibrator.probability([0.2, 0.1]) < 0.5


def test_first_is_right_uses_the_rankers_order():
    scores = [np.array([0.1, 0.9, 0.5]), np.array([0.3, 0.3])]  # a tie keeps the option order
    labels = [np.array([0.0, 1.0, 0.0]), np.array([0.0, 1.0])]
    sorted_scores, correct = first_is_right(scores, labels)
    assert sorted_scores == [[0.9, 0.5, 0.1], [0.3, 0.3]] and correct == [True, False]


def test_fitted_calibrator_is_calibrated_on_data_like_its_own():
    rng = np.random.default_rng(0)
    n_options = rng.choice([4, 10, 30], 3000)
    margins = rng.exponential(0.1, 3000)
    truth = 1 / (1 + np.exp(-(-0.5 + 12 * margins - 0.4 * np.log(n_options))))
    correct = rng.random(3000) < truth
    rankings = [[0.5 + m, 0.5] + [0.0] * (n - 2) for m, n in zip(margins, n_options)]
    calibrator = fit_calibrator(rankings[:2000], correct[:2000].tolist(), "synthetic")
    held = [calibrator.probability(r) for r in rankings[2000:]]
    assert expected_calibration_error(held, correct[2000:]) < 0.05
    with pytest.raises(ValueError, match="right and wrong"):
        fit_calibrator(rankings[:10], [True] * 10, "all right")


@pytest.mark.parametrize("method", ["seed", "cosine"])
def test_the_unlearned_methods_ship_a_calibration(method):
    calibrator = shipped_calibrator(method)
    assert calibrator is not None and calibrator.rows == 2111 and "train" in calibrator.fitted_on
    assert (SHIPPED_DIR / f"{method}.json").is_file()
    assert shipped_calibrator("no-such-method") is None
