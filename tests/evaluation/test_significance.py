"""Paired comparison of two methods: exact McNemar on first places, bootstrap on the score."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pictorank.evaluation.metrics import task_score
from pictorank.evaluation.significance import (
    compare_paired,
    format_comparisons,
    mcnemar_exact,
    mean_difference_interval,
)


def test_mcnemar_exact_is_the_two_sided_binomial_test_of_the_discordant_puzzles():
    assert mcnemar_exact(0, 0) == 1.0  # no puzzle told the methods apart
    assert mcnemar_exact(1, 2) == pytest.approx(1.0)  # the names set's 1 against 2: no evidence
    assert mcnemar_exact(0, 6) == pytest.approx(2 * 0.5**6)  # all six the same way
    assert mcnemar_exact(6, 0) == mcnemar_exact(0, 6)
    assert mcnemar_exact(10, 2) == pytest.approx(2 * sum(__import__("math").comb(12, k) for k in range(3)) / 2**12)
    with pytest.raises(ValueError, match="0 or more"):
        mcnemar_exact(-1, 3)


def test_mean_difference_interval_covers_a_known_shift_and_is_reproducible():
    rng = np.random.default_rng(1)
    b = rng.uniform(0, 1, 400)
    a = b + 0.05 + rng.normal(0, 0.02, 400)
    mean, low, high = mean_difference_interval(a, b)
    assert low < 0.05 < high and low < mean < high and high - low < 0.01
    assert mean_difference_interval(a, b) == (mean, low, high)  # seeded: the same interval every run
    wide = mean_difference_interval(a, b, confidence=0.99)
    assert wide[1] <= low and wide[2] >= high


def test_mean_difference_interval_of_identical_and_constant_differences():
    assert mean_difference_interval([0.3, 0.9], [0.3, 0.9]) == (0.0, 0.0, 0.0)
    assert mean_difference_interval([1.0, 2.0], [0.5, 1.5]) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError, match="equally long"):
        mean_difference_interval([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="non-empty"):
        mean_difference_interval([], [])


def test_compare_paired_counts_only_puzzles_where_exactly_one_method_is_first():
    method = [0, 0, 1, None, 0, 3]
    reference = [0, 2, 0, 0, 5, 3]
    c = compare_paired("learned", method, "cosine", reference)
    assert (c.wins, c.losses, c.rows) == (2, 2, 6)  # puzzles 1 and 4 won; 2 and 3 lost
    assert c.p_value == pytest.approx(1.0)
    expected = np.mean([task_score(a) - task_score(b) for a, b in zip(method, reference)])
    assert c.score_difference == pytest.approx(expected)
    assert c.score_low <= c.score_difference <= c.score_high
    assert c.hits1_difference == pytest.approx(0.0) and c.hits1_low < 0 < c.hits1_high  # 2 won, 2 lost of 6
    assert c.to_dict()["method"] == "learned"
    table = format_comparisons([c])
    assert "+2 / -2" in table and "cosine" in table and "+0.000 [-" in table


def test_the_hits1_interval_bounds_the_loss_a_few_discordant_puzzles_allow():
    """The names set's shape: 120 puzzles, 2 first places won and 5 lost, the rest shared."""
    method = [0] * 93 + [0, 0] + [1] * 5 + [2] * 20
    reference = [0] * 93 + [1, 1] + [0] * 5 + [2] * 20
    c = compare_paired("learned", method, "cosine", reference)
    assert (c.wins, c.losses) == (2, 5)
    assert c.hits1_difference == pytest.approx(-3 / 120)
    assert -0.09 < c.hits1_low < -0.05 and 0 < c.hits1_high < 0.03  # normal approximation: [-0.068, +0.018]
    with pytest.raises(ValueError, match="ranked 2 puzzles"):
        compare_paired("learned", [0, 1], "cosine", [0])


def test_cli_compare_prints_the_paired_table_and_checks_against(tmp_path: Path, data_dir: Path, monkeypatch,
                                                                 capsys):
    """`pictorank compare` with two stub methods: a paired section against cosine; --against checked first."""
    from pictorank import cli
    from pictorank.ranker import Ranker

    class StubRanker(Ranker):
        def __init__(self, method: str) -> None:
            self.method = method

        def score(self, queries):  # cosine: first option first; seed: last option first
            return [list(range(len(q.options)))[:: -1 if self.method == "cosine" else 1] for q in queries]

        def encoders(self):
            return []

    monkeypatch.setattr("pictorank.cli.make_ranker", lambda method, encoder=None: StubRanker(method))
    rows = (data_dir / "val.csv").read_text().splitlines()[:31]
    small = tmp_path / "small.csv"
    small.write_text("\n".join(rows) + "\n")
    base = ["compare", "--input", str(small), "--hints", str(data_dir / "hint_descriptions.csv"),
            "--methods", "seed", "cosine", "--quiet", "--no-cache"]
    assert cli.main(base) == 0
    out = capsys.readouterr().out
    assert "paired against cosine" in out and "McNemar" in out
    assert cli.main([*base, "--json", "--against", "seed"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert list(printed["methods"]) == ["seed", "cosine"] and printed["methods"]["seed"]["overall"]["rows"] == 30
    paired = printed["paired"]
    assert [(c["method"], c["reference"], c["rows"]) for c in paired] == [("cosine", "seed", 30)]
    assert paired[0]["wins"] + paired[0]["losses"] > 0  # the two stubs disagree on some first places
    assert cli.main([*base, "--against", "learned"]) == 2
    assert "--against 'learned' is not compared" in capsys.readouterr().err


def test_p_values_are_printed_to_three_decimals_or_as_below_a_thousandth():
    from pictorank.evaluation.significance import format_p_value

    assert format_p_value(0.4531) == "0.453" and format_p_value(0.001) == "0.001"
    assert format_p_value(0.0007) == "<0.001"


def test_compare_with_reference_defaults_to_cosine_and_needs_two_methods():
    from pictorank.evaluation.significance import compare_with_reference

    ranks = {"seed": [0, 1], "cosine": [1, 0], "learned": [0, 0]}
    assert [(c.method, c.reference) for c in compare_with_reference(ranks)] == [("seed", "cosine"), ("learned", "cosine")]
    assert [c.method for c in compare_with_reference(ranks, "seed")] == ["cosine", "learned"]
    assert compare_with_reference({"seed": [0], "learned": [0]}) == []  # no cosine, none named
    assert compare_with_reference({"cosine": [0]}) == []
