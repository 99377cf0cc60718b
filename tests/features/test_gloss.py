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


def test_the_columns_of_many_queries_follow_their_options_in_order():
    from helpers import WordHashModel
    from pictorank.encoders import Encoder, StoredVectors
    from pictorank.features.gloss import queries_gloss_columns
    from pictorank.features.word import WORD_COLUMNS, queries_word_columns
    from pictorank.query import Query

    base = Encoder(model=WordHashModel(), model_id="word-hash")
    glosses = StoredVectors.quantize(["snow"], base.encode(["precipitation falling as ice crystals"]))
    queries = [Query(("cold", "falling"), ("snow", "coldness")), Query(("sun",), ("snow",))]
    columns = queries_gloss_columns(queries, base, glosses)
    assert np.isnan(columns["gloss_cos"]).tolist() == [False, True, False]
    expected = float(glosses.get("snow") @ base.encode(["sun"])[0])
    assert columns["gloss_cos"][2] == pytest.approx(expected, abs=1e-6)
    assert all(len(v) == 0 for v in queries_gloss_columns([], base, glosses).values())
    assert set(queries_word_columns(queries, {"snow": 4.9})) == set(WORD_COLUMNS)
    assert queries_word_columns(queries, {"snow": 4.9})["open_zipf"].tolist()[:1] == [4.9]
