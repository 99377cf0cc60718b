"""The none-of-these model: the chance that the word meant is not among the options typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pictorank.errors import ModelError
from pictorank.ranker.absence import FEATURES, AbsenceModel, absence_features


def test_the_shipped_model_is_fitted_on_train_and_reads_a_good_match_as_present():
    model = AbsenceModel.load()
    assert "train" in model.fitted_on and "val" not in model.fitted_on and model.rows > 0
    good = model.probability([0.8, 0.3, 0.2, 0.1])  # one option fits the clue well
    poor = model.probability([0.25, 0.22, 0.2, 0.1])  # none does
    assert good is not None and poor is not None and 0 < good < poor < 1
    assert model.probability([]) is None


def test_features_do_not_depend_on_the_options_order():
    assert absence_features([0.1, 0.5, 0.3]) == absence_features([0.5, 0.3, 0.1])
    assert absence_features([0.5]) == [0.5, 0.0, 0.5, 0.0]


def test_a_damaged_model_file_is_a_model_error(tmp_path: Path):
    path = tmp_path / "none_of_these.json"
    path.write_text(json.dumps({"kind": "logistic", "features": list(FEATURES), "coef": [1.0], "intercept": 0.0}))
    with pytest.raises(ModelError, match="none-of-these"):
        AbsenceModel.load(path)
    with pytest.raises(ModelError, match="none-of-these"):
        AbsenceModel.load(tmp_path / "missing.json")
