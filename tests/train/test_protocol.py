"""The training protocol: every choice on train folds, val scored once at the end and never read
back; the train-CV estimate stored beside it.

A word-hash stand-in encoder keeps these tests fast (no model loads, no fine-tuning).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import WordHashModel, puzzle_row, write_hints, write_rows
from pictorank.cli import main
from pictorank.encoders import Encoder
from pictorank.train import TrainConfig, build_tables, fit_ranker_from_tables
from pictorank.train.estimate import answer_ranks, cv_estimate
from pictorank.train.lambdamart import chosen_trees
from pictorank.train.pipeline import train_command

QUIET = lambda message: None  # noqa: E731
FAST = dict(finetune=False, n_estimators=40, early_stopping_rounds=10, quantization=None, bag=2)
WORDS = ("seal", "fish", "candle", "rock", "boat", "flame", "cat", "wave")
HINTS = 'hintID,description\n1,animal\n2,"water, sea, ocean"\n3,"hair, fur"\n4,fire\n5,stone\n6,light\n'
CLUE_OF = {"seal": (1, 2), "fish": (2, 1), "candle": (6, 4), "rock": (5,), "boat": (2, 5), "flame": (4, 6),
           "cat": (1, 3), "wave": (2, 6)}


@pytest.fixture
def word_encoder() -> Encoder:
    return Encoder(model=WordHashModel(dimension=16), model_id="word-hash-protocol")


def _puzzles(path, prefix: str, answers, shift: int):
    """A CSV of one clue per answer (its CLUE_OF pictograms), four options each."""
    rows = []
    for i, answer in enumerate(answers):
        others = [w for w in WORDS if w != answer]
        choices = [answer, *others[(i + shift) % 5 : (i + shift) % 5 + 3]]
        rows.append(puzzle_row(f"{prefix}{i}", hint_ids=CLUE_OF[answer], choices=choices[i % 4 :] + choices[: i % 4],
                               answer=answer))
    return write_rows(path, rows)


def _train_files(tmp_path):
    hints = write_hints(tmp_path / "hints.csv", HINTS)
    train = _puzzles(tmp_path / "train.csv", "t", [*WORDS, *WORDS, *WORDS], shift=0)
    return hints, train


def test_val_changes_nothing_in_the_model(tmp_path, word_encoder):
    """Two different val files, and none: the same boosters, the same train-CV estimate. Val is
    scored after training and stored as the held-out report, and only there."""
    hints, train = _train_files(tmp_path)
    one = _puzzles(tmp_path / "val1.csv", "a", WORDS[:4], shift=1)
    two = _puzzles(tmp_path / "val2.csv", "b", WORDS[2:], shift=3)
    config = TrainConfig(**FAST)
    made = {name: train_command(train, val, hints, tmp_path / name, config, word_encoder, QUIET)
            for name, val in (("one", one), ("two", two), ("none", None))}
    boosters = {name: "".join(p.read_text() for p in sorted((tmp_path / name).glob("model-*.txt"))) for name in made}
    assert boosters["one"] == boosters["two"] == boosters["none"]
    assert made["one"]["train_cv"] == made["two"]["train_cv"] == made["none"]["train_cv"]
    assert made["none"]["held_out_report"] is None
    assert made["one"]["held_out_report"]["rows"] == 4 and made["two"]["held_out_report"]["rows"] == 6
    saved = json.loads((tmp_path / "one" / "metadata.json").read_text())
    assert "val_metrics" not in saved and {"overall", "by_subtask"} <= set(saved["held_out_report"])
    assert "val" not in json.loads((tmp_path / "none" / "metadata.json").read_text())["training_files"]


def test_the_trees_are_the_median_of_the_chosen_settings_stopping_points(word_encoder, tmp_path):
    hints, train = _train_files(tmp_path)
    from pictorank.puzzles import load_hints, load_puzzles, to_queries

    vocab = load_hints(hints)
    queries = to_queries(load_puzzles(train, vocab), vocab)
    config = TrainConfig(**FAST)
    ranker = fit_ranker_from_tables(build_tables(queries, word_encoder, config, QUIET), config, QUIET)
    chosen = next(r for r in ranker.training["cv"] if r["params"] == ranker.training["lgbm_params"])
    expected = chosen_trees(chosen["trees"])
    assert ranker.training["trees"] == [expected] * config.bag
    assert all(b.num_trees() == expected for b in ranker.booster.boosters)
    estimate = ranker.training["train_cv"]
    assert estimate["rows"] == len(queries)  # the train clues as they are, not the unfamiliar rows
    assert 0.0 <= estimate["hits@1"] <= 1.0 and estimate["folds"] == len(estimate["per_fold"]) >= 2


def test_chosen_trees_is_the_rounded_median_and_at_least_one():
    assert chosen_trees([10, 300, 40]) == 40
    assert chosen_trees([10, 21]) == 16 and chosen_trees([0, 0, 1]) == 1


def test_the_estimate_is_the_mean_and_standard_error_over_folds():
    labels = [np.array([0.0, 1.0, 0.0])] * 4
    scores = [np.array([0.1, 0.9, 0.0]), np.array([0.5, 0.5, 0.0]), np.array([0.9, 0.1, 0.0]), np.array([0.0, 1.0, 0.5])]
    ranks = answer_ranks(scores, labels)
    assert ranks == [0, 1, 1, 0]  # a tie keeps the option order, as Ranker.rank does
    estimate = cv_estimate(ranks, np.array([0, 0, 1, 1]), np.array([True, True, True, False]))
    assert [f["hits@1"] for f in estimate["per_fold"]] == [0.5, 0.0]  # the uncounted row is left out
    assert estimate["hits@1"] == pytest.approx(0.25) and estimate["hits@1_se"] == pytest.approx(0.25)
    assert estimate["mrr"] == pytest.approx((0.75 + 0.5) / 2) and estimate["rows"] == 3


def test_cli_train_runs_without_val(tmp_path, capsys):
    """--val is optional: without it the command goes on to train (here it stops at the train
    file's single answer, named in one line, rather than asking for --val)."""
    hints = write_hints(tmp_path / "hints.csv")
    write_rows(tmp_path / "train.csv", [puzzle_row(f"t{i}", answer="seal") for i in range(5)])
    args = ["train", "--train", str(tmp_path / "train.csv"), "--hints", str(hints), "--out", str(tmp_path / "m"),
            "--no-cache", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "train.csv" in err and "at least 2 different answers" in err and len(err.strip().splitlines()) == 1
