"""Small training sets: the recipe scales down (fewer folds, smaller leaves) or training stops at
once with a clear message; and the unfamiliar out-of-fold rows are built as documented.

A word-hash stand-in encoder keeps these tests fast (no model loads, no fine-tuning).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import WordHashModel, puzzle_row, write_hints, write_rows
from pictorank.cli import main
from pictorank.encoders import Encoder
from pictorank.errors import UsageError
from pictorank.query import Query
from pictorank.train import TrainConfig, build_tables, fit_ranker_from_tables
from pictorank.train.config import DEFAULT_GRID, MIN_ANSWERS
from pictorank.train.fold_encoders import answer_kinds, query_folds
from pictorank.train.oof import check_trainable, unfamiliar_features

QUIET = lambda message: None  # noqa: E731
FAST = dict(finetune=False, n_estimators=30, early_stopping_rounds=10, quantization=None)  # the word-hash stand-in has no ONNX export


@pytest.fixture
def word_encoder() -> Encoder:
    return Encoder(model=WordHashModel(dimension=16), model_id="word-hash-small-data")


THEMES = {  # answer -> a description that points at it, and a shared classifier
    "sunflower": ("flower", "sun"), "water lily": ("flower", "water, sea"), "boat": ("vehicle", "water, sea"),
    "car": ("vehicle", "road"), "night flower": ("flower", "night"), "truck": ("vehicle", "load"),
    "rose": ("flower", "love"), "train": ("vehicle", "rail"),
}


def clues(n_answers: int, per_answer: int = 2) -> list[Query]:
    """`per_answer` clues for each of the first `n_answers` answers, options from all answers."""
    answers = list(THEMES)[:n_answers]
    out = []
    for i in range(per_answer):
        for j, answer in enumerate(answers):
            others = [a for a in THEMES if a != answer]
            options = [answer, *others[i : i + 3]]
            options = options[j % 4 :] + options[: j % 4]
            out.append(Query(THEMES[answer], tuple(options), answer))
    return out


def test_a_bliss_sized_set_keeps_the_recipe():
    config = TrainConfig()
    sized, notes = config.sized_for(answers=1900, option_rows=31000)
    assert sized == config and notes == []


def test_a_small_set_gets_fewer_folds_and_smaller_leaves_and_says_so():
    sized, notes = TrainConfig(folds=3, cv_folds=3).sized_for(answers=2, option_rows=60)
    assert (sized.folds, sized.cv_folds) == (2, 2)
    assert all(g["min_child_samples"] == 3 for g in sized.grid)
    assert [g["num_leaves"] for g in sized.grid] == [g["num_leaves"] for g in DEFAULT_GRID]
    assert len(notes) == 3 and "2 out-of-fold folds instead of 3" in notes[0]


def test_one_answer_cannot_be_trained_on():
    with pytest.raises(UsageError, match=f"at least {MIN_ANSWERS} different answers .found 1"):
        check_trainable(clues(1))
    assert check_trainable(clues(3)) == 3


def test_cli_train_names_the_train_file_when_it_has_one_answer(tmp_path, capsys):
    hints = write_hints(tmp_path / "hints.csv")
    rows = [puzzle_row(f"t{i}", answer="seal") for i in range(5)]
    write_rows(tmp_path / "train.csv", rows)
    write_rows(tmp_path / "val.csv", [puzzle_row("v1", answer="fish")])
    args = ["train", "--train", str(tmp_path / "train.csv"), "--val", str(tmp_path / "val.csv"),
            "--hints", str(hints), "--out", str(tmp_path / "m"), "--no-cache", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "train.csv" in err and "at least 2 different answers" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("n_answers", [2, 3, 8])
def test_tiny_training_sets_train_and_rank(word_encoder, n_answers):
    """Down to two answers: folds, CV folds and leaves shrink, and the ranker still ranks."""
    train, val = clues(n_answers), clues(8, per_answer=1)
    logged: list[str] = []
    config = TrainConfig(**FAST, folds=3, cv_folds=3)  # more folds than the smallest sets have answers
    tables = build_tables(train, word_encoder, config, logged.append)
    assert set(tables.folds.tolist()) <= set(range(min(3, n_answers)))
    if n_answers < 3:
        assert any("small training set" in line and "folds instead of 3" in line for line in logged)
    ranker = fit_ranker_from_tables(tables, config, QUIET)
    rankings = [r.options for r in ranker.rank(val)]
    assert [sorted(r) for r in rankings] == [sorted(q.options) for q in val]


def test_unfamiliar_rows_hold_out_the_answer_kind_and_redraw_options_from_it(word_encoder):
    train = clues(8, per_answer=3)
    config = TrainConfig(**FAST, answer_kinds=4)
    kinds = answer_kinds(train, word_encoder, config.answer_kinds, config.seed)
    folds = query_folds(train, 3, config.seed)
    fold_of = {q.answer: f for q, f in zip(train, folds)}
    table, rows, row_folds, reused = unfamiliar_features(train, folds, word_encoder, config, QUIET)
    assert reused == 0 and len(table) == sum(len(q.options) for q in rows)
    for q, fold in zip(rows, row_folds):
        group = kinds[q.answer] % config.unfamiliar_groups
        assert q.answer in q.options
        assert all(kinds[o] % config.unfamiliar_groups == group for o in q.options)  # options of the held kind
        assert fold == fold_of[q.answer]  # CV keeps it with its original's answer
    assert len(rows) == len(train)  # every clue once (no group here is too small to redraw options)
    assert (table["fam_hints_known"] < 1).any()  # a share of the descriptions is forgotten


def test_the_tables_mark_the_unfamiliar_rows_and_off_means_none(word_encoder):
    train = clues(8, per_answer=2)
    with_far = build_tables(train, word_encoder, TrainConfig(**FAST, answer_kinds=4), QUIET)
    assert with_far.familiar.tolist() == [True] * len(train) + [False] * len(train)
    assert len(with_far.X_train) == len(with_far.y_train) == with_far.sizes_train.sum()
    without = build_tables(train, word_encoder, TrainConfig(**FAST, unfamiliar_groups=0), QUIET)
    assert without.familiar.all() and len(without.sizes_train) == len(train)


def test_training_on_a_small_set_is_deterministic(word_encoder):
    train = clues(8, per_answer=2)
    config = TrainConfig(**FAST, answer_kinds=4)
    one = fit_ranker_from_tables(build_tables(train, word_encoder, config, QUIET), config, QUIET)
    two = fit_ranker_from_tables(build_tables(train, word_encoder, config, QUIET), config, QUIET)
    assert one.booster.model_to_string() == two.booster.model_to_string()


def test_a_set_whose_held_out_rankings_are_all_right_trains_without_a_confidence(word_encoder, tmp_path):
    """One option per row: every out-of-fold ranking is right, so there is nothing to calibrate
    the confidence on. Training used to end in a TypeError when it summed the missing confidences."""
    from pictorank.train.pipeline import train_command

    hints = write_hints(tmp_path / "hints.csv")
    answers = ["seal", "fish", "candle", "rock"]
    write_rows(tmp_path / "train.csv", [puzzle_row(f"t{i}", choices=(a,), answer=a) for i, a in enumerate(answers)])
    write_rows(tmp_path / "val.csv", [puzzle_row("v1")])
    logged: list[str] = []
    metadata = train_command(tmp_path / "train.csv", tmp_path / "val.csv", hints, tmp_path / "m",
                             TrainConfig(**FAST), word_encoder, logged.append)
    assert metadata["held_out_report"]["calibration"] is None
    assert any("no confidence calibration" in line for line in logged)
    assert (tmp_path / "m" / "ranker.json").is_file()


def test_a_cache_that_cannot_keep_fine_tuned_weights_costs_only_a_log_line(tmp_path) -> None:
    """`train` with a full or read-only cache ended in a traceback: the weights it cannot keep
    are logged, and training goes on."""
    from pictorank.train.fold_encoders import _keep

    class FullDisk:
        def save(self, path: str) -> None:
            (tmp_path / "partial").mkdir()
            raise OSError(28, "No space left on device")

    logged: list[str] = []
    _keep(FullDisk(), tmp_path / "finetuned" / "key", logged.append)
    assert len(logged) == 1 and "No space left on device" in logged[0] and "goes on" in logged[0]
    assert not (tmp_path / "finetuned" / "key").exists()


def test_fine_tuned_weights_half_saved_by_a_killed_run_are_removed_by_the_next(tmp_path) -> None:
    """A run killed while saving left `<key>.<pid>.tmp` in the cache for good: the next save
    removes those of dead processes, and keeps a living writer's."""
    import subprocess
    import sys

    from pictorank.train.fold_encoders import _keep

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folder = tmp_path / "finetuned"
    (folder / f"key.{dead.stdout.strip()}.tmp").mkdir(parents=True)
    (folder / f"key.{os.getppid()}.tmp").mkdir()  # a living process's save

    class Weights:
        def save(self, path: str) -> None:
            Path(path).mkdir()

    _keep(Weights(), folder / "key", print)
    assert sorted(p.name for p in folder.iterdir()) == sorted(["key", f"key.{os.getppid()}.tmp"])
