from __future__ import annotations

import numpy as np
import pytest

from pictorank.features.gloss import GLOSS_COLUMNS, gloss_columns


def _unit(v: list[float]) -> np.ndarray:
    return np.array(v) / np.linalg.norm(v)


def test_a_gloss_near_every_hint_scores_above_one_near_a_single_hint():
    hints = np.stack([_unit([1, 0, 0]), _unit([0, 1, 0])])
    clue = _unit([1, 1, 0])
    columns = gloss_columns(clue, hints, [_unit([1, 1, 0.2]), _unit([1, 0, 0.2]), None])
    assert set(columns) == set(GLOSS_COLUMNS)
    assert columns["gloss_cos"][0] > columns["gloss_cos"][1]
    assert columns["gloss_hint_min"][0] > columns["gloss_hint_min"][1]
    assert columns["gloss_hint_max"][1] == pytest.approx(float(_unit([1, 0, 0.2]) @ hints[0]))
    assert columns["gloss_z"][0] > 0 > columns["gloss_z"][1]
    assert all(np.isnan(columns[name][2]) for name in GLOSS_COLUMNS)  # no gloss: missing, not zero


def test_candidates_without_any_gloss_get_only_missing_values():
    columns = gloss_columns(_unit([1, 0]), np.stack([_unit([1, 0])]), [None, None])
    assert all(np.isnan(columns[name]).all() and len(columns[name]) == 2 for name in GLOSS_COLUMNS)
    assert gloss_columns(_unit([1, 0]), np.stack([_unit([1, 0])]), [_unit([0, 1])])["gloss_z"].tolist() == [0.0]
