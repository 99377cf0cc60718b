"""`pictorank suggest` and `evaluate-suggest`: one-line errors with exit 2, and small real runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pictorank.encoders import memo as encoder_module
from pictorank.cli import main

# A slice of train has classes seen once: scikit-learn warns, harmlessly, that y looks continuous.
pytestmark = pytest.mark.filterwarnings("ignore:The number of unique classes:UserWarning")


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(encoder_module, "load_base_model", refuse)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--word", " "], "blank"),
        (["--word", "sun|flower"], "contains '|'"),
        (["--word", "x" * 101], "characters long"),
        (["--word", "cat", "--avoid", *[f"w{i}" for i in range(101)]], "at most 100"),
        (["--word", "cat", "--max-length", "9"], "max_length"),
        (["--word", "cat", "--model", "no/such/dir"], "not a pictorank model directory"),
        (["--word", "cat", "--reader", "no/such/dir"], "not a pictorank model directory"),
        (["--word", "cat", "--train", "no/such.csv"], "cannot read file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    extra: list[str], message: str, data_dir: Path, no_model: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["suggest", "--hints", str(data_dir / "hint_descriptions.csv"), "--cache-dir", str(tmp_path), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("pictorank: error:") and message in err[0]


def test_no_train_beside_the_hints_is_a_usage_error(tmp_path: Path, data_dir: Path, no_model: None,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    hints = tmp_path / "hints.csv"
    hints.write_text((data_dir / "hint_descriptions.csv").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["suggest", "--word", "cat", "--hints", str(hints), "--no-cache"]) == 2
    assert "--train" in capsys.readouterr().err


def _slice(source: Path, path: Path, rows: int) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[: rows + 1]), encoding="utf-8")
    return path


def test_evaluate_suggest_names_a_row_it_cannot_clue_before_any_work(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The row would otherwise be met after the fit and every other row's clue, unnamed."""
    from helpers import puzzle_row, write_rows

    long_word = "x" * 101
    rows = [puzzle_row("v1"), puzzle_row("v2", choices=("seal", long_word), answer=long_word)]
    source = write_rows(tmp_path / "val.csv", rows)
    code = main(["evaluate-suggest", "--input", str(source), "--hints", str(data_dir / "hint_descriptions.csv"),
                 "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "val.csv, row v2, column answer: the word is 101 characters long" in err[0]


def test_too_few_training_answers_name_the_training_file(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    train = _slice(data_dir / "train.csv", tmp_path / "tiny_train.csv", 5)
    code = main(["suggest", "--word", "cat", "--hints", str(data_dir / "hint_descriptions.csv"), "--train", str(train),
                 "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "tiny_train.csv" in err[0] and "different answers" in err[0]


# -- the reader: --reader, else --model's, else the default model's (as `pictorank serve` reads) --


def _reader_args(**given: object) -> "argparse.Namespace":
    import argparse

    return argparse.Namespace(**{"reader": None, "model": None, "quiet": False, **given})


def _settings():
    from pictorank.settings import CommonSettings

    return CommonSettings()


def test_without_a_default_model_there_is_no_reader_and_it_says_so(
    tmp_path: Path, no_model: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pictorank import cli

    monkeypatch.setenv("PICTORANK_DEFAULT_MODEL_DIR", str(tmp_path / "absent"))
    assert cli._reading_dir(_reader_args(), _settings()) == (None, False)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"pictorank: no reader: the default model did not load (no model at {tmp_path / 'absent'})"]


def test_a_default_model_that_does_not_load_leaves_the_reader_out(
    tmp_path: Path, no_model: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pictorank import cli

    broken = tmp_path / "default"
    broken.mkdir()
    (broken / "ranker.json").write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("PICTORANK_DEFAULT_MODEL_DIR", str(broken))
    assert cli._reading_dir(_reader_args(), _settings()) == (None, False)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pictorank: no reader: the default model did not load (")


def test_reader_none_never_looks_for_the_default_model(no_model: None, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from pictorank import cli

    def refuse(settings: object) -> None:
        raise AssertionError("the default model was looked for")

    monkeypatch.setattr(cli, "default_model", refuse)
    assert cli._reading_dir(_reader_args(reader="none"), _settings()) == (None, False)
    assert capsys.readouterr().err == ""


def test_the_guessers_model_reads_when_no_reader_is_named(no_model: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--model DIR` alone: the model's fine-tuned encoder reads, as a service of DIR reads with it."""
    from pictorank import cli

    monkeypatch.setattr(cli, "default_model", lambda settings: (_ for _ in ()).throw(AssertionError("default looked up")))
    assert cli._reading_dir(_reader_args(model="models/x"), _settings()) == (Path("models/x"), False)


def test_a_default_model_is_read_with_when_it_checks_out(
    tmp_path: Path, no_model: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pictorank import cli
    from pictorank.ranker import CosineRanker

    CosineRanker(encoder=object()).save(tmp_path / "default")  # type: ignore[arg-type]
    monkeypatch.setenv("PICTORANK_DEFAULT_MODEL_DIR", str(tmp_path / "default"))
    assert cli._reading_dir(_reader_args(), _settings()) == (tmp_path / "default", True)
    assert capsys.readouterr().err == ""


def test_the_default_model_dir_follows_its_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pictorank.api.settings import Settings
    from pictorank.settings import CommonSettings, bundled_model_dir

    monkeypatch.setenv("PICTORANK_DEFAULT_MODEL_DIR", str(tmp_path))
    assert CommonSettings().default_model_dir == tmp_path == Settings().default_model_dir
    monkeypatch.delenv("PICTORANK_DEFAULT_MODEL_DIR")
    assert CommonSettings().default_model_dir == bundled_model_dir() == Settings().default_model_dir
