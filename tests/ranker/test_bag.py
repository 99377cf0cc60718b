"""BoosterBag: the mean of its boosters, in scores and in SHAP contributions."""

from __future__ import annotations

import numpy as np
import pytest

from pictorank.errors import ModelError
from pictorank.ranker.bag import BoosterBag


def _boosters(count: int, columns: list[str]):
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, len(columns)))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.3, size=200) > 0).astype(float)
    return [lgb.train({"objective": "binary", "num_leaves": 4, "feature_fraction": 0.5, "seed": seed, "verbose": -1},
                      lgb.Dataset(X, y, feature_name=columns), num_boost_round=20) for seed in range(count)], X


def test_scores_and_contributions_are_the_boosters_means():
    boosters, X = _boosters(3, ["a", "b", "c"])
    bag = BoosterBag(boosters)
    singles = np.array([b.predict(X, raw_score=True) for b in boosters])
    assert not np.allclose(singles[0], singles[1])  # the seeds really differ
    np.testing.assert_allclose(bag.predict(X), np.mean([b.predict(X) for b in boosters], axis=0))
    contributions = bag.predict(X[:5], pred_contrib=True)
    assert contributions.shape == (5, 4)  # one column per feature, then the bias
    np.testing.assert_allclose(contributions.sum(axis=1), singles[:, :5].mean(axis=0), rtol=1e-9)


def test_saves_one_lightgbm_file_per_booster_and_loads_them(tmp_path):
    boosters, X = _boosters(2, ["a", "b", "c"])
    bag = BoosterBag(boosters)
    bag.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model-0.txt", "model-1.txt"] == bag.file_names()
    np.testing.assert_allclose(BoosterBag.load(tmp_path, 2).predict(X), bag.predict(X))


def test_boosters_over_different_columns_are_refused():
    (one,), _ = _boosters(1, ["a", "b", "c"])
    (other,), _ = _boosters(1, ["a", "b", "z"])
    with pytest.raises(ModelError, match="different feature columns"):
        BoosterBag([one, other])
    with pytest.raises(ModelError, match="at least one"):
        BoosterBag([])
