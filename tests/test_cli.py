"""The command line: documented options, exit codes, one-line errors, and end-to-end runs.

Commands run in-process through `main()` with the session's model patched in, so torch and the
model load once per test session; two subprocesses check the installed entry point (an error
without torch, and a quiet run that loads the model for real).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, puzzle_row, write_hints, write_rows

from pictorank.encoders import memo as encoder_module
from pictorank.cli import build_parser, main
from pictorank.submission import validate_submission

BASELINE_SEED_SCORE, BASELINE_SEED_HITS1 = 0.9649, 0.620  # the task statement's seed on val


@pytest.fixture
def session_model(monkeypatch: pytest.MonkeyPatch, base_model: object) -> object:
    """Every Encoder the CLI builds gets the already loaded model instead of loading it again."""
    monkeypatch.setattr(encoder_module, "load_base_model", lambda: base_model)
    return base_model


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail loudly if a command that should not need the model tries to load it."""

    def refuse() -> None:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(encoder_module, "load_base_model", refuse)


def val_slice(data_dir: Path, tmp_path: Path, rows: int) -> Path:
    lines = (data_dir / "val.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "slice.csv"
    path.write_text("".join(lines[: rows + 1]), encoding="utf-8")
    return path


# -- help ------------------------------------------------------------------------------------------


def subcommands() -> dict[str, argparse.ArgumentParser]:
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def test_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for name in ("predict", "evaluate", "validate"):
        assert name in out
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    for choice in commands._choices_actions:  # each subcommand listed with a one-line help
        assert choice.help and f"{choice.dest}" in out


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_option_is_documented(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    parser = subcommands()[name]
    undocumented = [a.dest for a in parser._actions if not a.help]
    assert undocumented == []
    with pytest.raises(SystemExit) as exit_:
        main([name, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag in out


# -- bad input: exit 2, one line, no traceback, no file ------------------------------------------------


BAD_INPUTS = {
    "malformed JSON": ([puzzle_row("v1"), puzzle_row("v2", hints_json="[1, 2")], "row v2, column hints_json: malformed JSON"),
    "unknown hint": ([puzzle_row("v1", hint_ids=(1, 42))], "row v1, column hints: hint ids not in hint_descriptions.csv: [42]"),
    "answer not an option": ([puzzle_row("v1", answer="whale")], "row v1, column answer: answer 'whale' is not among"),
    "repeated option": ([puzzle_row("v1", choices=("a", "b", "a"), answer="a")], "row v1, column options: repeated"),
    "duplicate id": ([puzzle_row("v1"), puzzle_row("v1")], "row v1, column datapointID: duplicate datapointID"),
}


def assert_one_line_error(err: str, expected: str) -> None:
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("pictorank: error: ")
    assert expected in err
    assert "Traceback" not in err


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_bad_input_exits_2(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str], command: str, case: str) -> None:
    rows, expected = BAD_INPUTS[case]
    source = write_rows(tmp_path / "val.csv", rows)
    hints = write_hints(tmp_path / "hints.csv")
    out = tmp_path / "submission.csv"
    args = [command, "--input", str(source), "--hints", str(hints), "--no-cache", "--quiet"]
    args += ["--output", str(out)] if command == "predict" else []
    assert main(args) == 2
    captured = capsys.readouterr()
    assert_one_line_error(captured.err, f"{source}, {expected}")
    assert captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hints.csv", "val.csv"]


def test_non_utf8_input(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "test.csv"
    source.write_bytes("datapointID,subtaskID,hints,hints_json,options,options_json\nt1,1,1,\"[1]\",é,\"[\"\"é\"\"]\"\n".encode("cp1252"))
    hints = write_hints(tmp_path / "hints.csv")
    assert main(["predict", "--input", str(source), "--hints", str(hints), "--output", str(tmp_path / "s.csv")]) == 2
    assert_one_line_error(capsys.readouterr().err, f"{source}, row line 2: file is not valid UTF-8")
    assert not (tmp_path / "s.csv").exists()


def test_missing_hints_file(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_rows(tmp_path / "val.csv", [puzzle_row()])
    assert main(["evaluate", "--input", str(source), "--hints", str(tmp_path / "nope.csv")]) == 2
    assert_one_line_error(capsys.readouterr().err, "nope.csv: cannot read file (No such file or directory)")


def test_evaluate_needs_answers(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_rows(tmp_path / "test.csv", [puzzle_row(answer=None)])
    hints = write_hints(tmp_path / "hints.csv")
    assert main(["evaluate", "--input", str(source), "--hints", str(hints), "--no-cache"]) == 2
    assert_one_line_error(capsys.readouterr().err, "column answer: evaluation needs an answer column")


def test_bad_model_dir(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_rows(tmp_path / "val.csv", [puzzle_row()])
    hints = write_hints(tmp_path / "hints.csv")
    out = tmp_path / "s.csv"
    args = ["predict", "--input", str(source), "--hints", str(hints), "--model", str(tmp_path / "nomodel")]
    assert main([*args, "--no-cache", "--output", str(out)]) == 2
    assert_one_line_error(capsys.readouterr().err, "nomodel: not a pictorank model directory")
    assert not out.exists()


# -- validate -----------------------------------------------------------------------------------------


def test_validate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_rows(tmp_path / "test.csv", [puzzle_row(f"t{i}", answer=None) for i in range(3)])
    good = tmp_path / "good.csv"
    good.write_text("datapointID,subtaskID,answer\nt0,1,seal\nt1,1,fish|seal\nt2,1,rock\n", encoding="utf-8")
    assert main(["validate", "--submission", str(good), "--input", str(source)]) == 0
    assert capsys.readouterr().out == f"{good}: valid\n"

    bad = tmp_path / "bad.csv"
    bad.write_text("datapointID,subtaskID,answer\nt0,1,seal|seal\nt1,2,whale\n", encoding="utf-8")
    assert main(["validate", "--submission", str(bad), "--input", str(source)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"{bad}: row t0, column answer: repeated options",
        f"{bad}: row t1, column subtaskID: '2', expected 1",
        f"{bad}: row t1, column answer: not among the row's options: ['whale']",
        f"{bad}: 1 input rows have no submission row, first: ['t2']",
    ]
    assert captured.err == "invalid: 4 problem(s)\n"

    no_column = tmp_path / "nocol.csv"
    no_column.write_text("datapointID,answer\nt0,seal\n", encoding="utf-8")
    assert main(["validate", "--submission", str(no_column), "--input", str(source)]) == 1
    assert capsys.readouterr().out == f"{no_column}: column subtaskID: missing required column(s)\n"

    broken_input = write_rows(tmp_path / "broken.csv", [puzzle_row(subtask_id="x", answer=None)])
    assert main(["validate", "--submission", str(good), "--input", str(broken_input)]) == 2
    assert_one_line_error(capsys.readouterr().err, "row v1, column subtaskID: not an integer: 'x'")


def test_entry_point_in_a_real_process(tmp_path: Path) -> None:
    """The one subprocess: the installed command, no traceback, and it never imports torch for this."""
    source = write_rows(tmp_path / "val.csv", [puzzle_row("v1", hints_json="[1, 2")])
    hints = write_hints(tmp_path / "hints.csv")
    command = [sys.executable, "-m", "pictorank.cli", "predict", "--input", str(source), "--hints", str(hints)]
    done = subprocess.run([*command, "--output", str(tmp_path / "s.csv")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert_one_line_error(done.stderr, "row v1, column hints_json: malformed JSON")
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.slow
def test_quiet_prints_nothing_on_stderr(tmp_path: Path, data_dir: Path) -> None:
    """--quiet also silences the libraries' own bars (transformers' "Loading weights" bar)."""
    source = val_slice(data_dir, tmp_path, rows=3)
    command = [sys.executable, "-m", "pictorank.cli", "predict", "--input", str(source), "--method", "cosine",
               "--hints", str(data_dir / "hint_descriptions.csv"), "--output", str(tmp_path / "s.csv"),
               "--no-cache", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
    assert (tmp_path / "s.csv").is_file()


# -- end to end on the real model -------------------------------------------------------------------


@pytest.mark.parametrize("method", ["cosine", "seed"])
def test_predict_writes_a_valid_submission(tmp_path: Path, data_dir: Path, session_model: object, method: str) -> None:
    source = val_slice(data_dir, tmp_path, rows=12)
    out = tmp_path / "out" / "submission.csv"
    hints = str(data_dir / "hint_descriptions.csv")
    args = ["predict", "--input", str(source), "--hints", hints, "--method", method, "--quiet"]
    assert main([*args, "--cache-dir", str(tmp_path / "cache"), "--output", str(out)]) == 0
    assert validate_submission(out, source) == []
    assert len(out.read_text(encoding="utf-8").splitlines()) == 13


def test_predict_reuses_the_disk_cache(tmp_path: Path, data_dir: Path, session_model: object, monkeypatch: pytest.MonkeyPatch) -> None:
    source = val_slice(data_dir, tmp_path, rows=8)
    hints = str(data_dir / "hint_descriptions.csv")
    args = ["predict", "--input", str(source), "--hints", hints, "--quiet", "--cache-dir", str(tmp_path / "cache")]
    assert main([*args, "--output", str(tmp_path / "first.csv")]) == 0

    def refuse() -> None:
        raise AssertionError("the model was loaded although every string is cached")

    monkeypatch.setattr(encoder_module, "load_base_model", refuse)
    assert main([*args, "--output", str(tmp_path / "second.csv")]) == 0
    assert (tmp_path / "second.csv").read_text(encoding="utf-8") == (tmp_path / "first.csv").read_text(encoding="utf-8")


def test_evaluate_seed_reproduces_the_baseline(data_dir: Path, session_model: object, capsys: pytest.CaptureFixture[str]) -> None:
    """The task's seed baseline on the bundled val, one row at a time (~15 s: the slowest test)."""
    hints = str(data_dir / "hint_descriptions.csv")
    args = ["evaluate", "--input", str(data_dir / "val.csv"), "--hints", hints, "--method", "seed"]
    assert main([*args, "--no-cache", "--quiet", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["overall"]["rows"] == 563
    assert result["overall"]["score"] == pytest.approx(BASELINE_SEED_SCORE, abs=0.01)
    assert result["overall"]["hits@1"] == pytest.approx(BASELINE_SEED_HITS1, abs=0.01)
    assert set(result["by_subtask"]) == {"1", "2", "3"}


# -- never destroy what the user did not ask to replace ---------------------------------------------


def _predict_args(tmp_path: Path, output: str) -> list[str]:
    source = write_rows(tmp_path / "test.csv", [puzzle_row("t1", answer=None)])
    hints = write_hints(tmp_path / "hints.csv")
    return ["predict", "--input", str(source), "--hints", str(hints), "--output", output, "--no-cache", "--quiet"]


@pytest.mark.parametrize("which", ["input", "hints", "link to input"])
def test_output_never_overwrites_an_input(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str], which: str) -> None:
    args = _predict_args(tmp_path, "placeholder")
    target = {"input": tmp_path / "test.csv", "hints": tmp_path / "hints.csv"}.get(which)
    if target is None:
        target = tmp_path / "link.csv"
        target.symlink_to(tmp_path / "test.csv")
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.csv")}
    args[args.index("placeholder")] = str(target)
    assert main(args) == 2
    assert_one_line_error(capsys.readouterr().err, "is the input file")
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.csv")} == before


@pytest.mark.parametrize("kind", ["folder", "under a file", "device"])
def test_bad_output_fails_before_any_ranking(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """no_model: the check comes before the model would load; /dev/null stays a device."""
    (tmp_path / "a_file").write_text("x")
    output = {"folder": str(tmp_path), "under a file": str(tmp_path / "a_file" / "s.csv"), "device": "/dev/null"}[kind]
    assert main(_predict_args(tmp_path, output)) == 2
    assert_one_line_error(capsys.readouterr().err, output)
    assert Path("/dev/null").is_char_device()


def test_output_through_a_symlink_replaces_the_target_and_keeps_modes(
    tmp_path: Path, session_model: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link stays a link; an existing file keeps its mode; a new one honours the umask."""
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    real.chmod(0o644)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert main(_predict_args(tmp_path, str(link))) == 0
    assert link.is_symlink() and real.read_text().startswith("datapointID,subtaskID,answer")
    assert real.stat().st_mode & 0o777 == 0o644
    old_umask = os.umask(0o027)
    try:
        assert main(_predict_args(tmp_path, str(tmp_path / "new.csv"))) == 0
    finally:
        os.umask(old_umask)
    assert (tmp_path / "new.csv").stat().st_mode & 0o777 == 0o640


def _report_args(tmp_path: Path, data_dir: Path, report: Path, *ranker: str) -> list[str]:
    return ["evaluate", "--input", str(val_slice(data_dir, tmp_path, 3)), "--hints", str(data_dir / "hint_descriptions.csv"),
            *ranker, "--report", str(report), "--no-cache", "--quiet"]


def test_report_into_a_foreign_folder_is_refused_before_ranking(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("x")
    assert main(_report_args(tmp_path, data_dir, keep, "--method", "cosine")) == 2
    assert_one_line_error(capsys.readouterr().err, "not written by pictorank")
    assert (keep / "notes.txt").read_text() == "x"


def test_train_into_a_foreign_folder_is_refused_before_training(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "models"
    out.mkdir()
    (out / "notes.txt").write_text("x")
    hints = str(data_dir / "hint_descriptions.csv")
    args = ["train", "--train", str(val_slice(data_dir, tmp_path, 5)), "--val", str(val_slice(data_dir, tmp_path, 5)),
            "--hints", hints, "--out", str(out), "--no-cache", "--quiet"]
    assert main(args) == 2
    assert_one_line_error(capsys.readouterr().err, "--force")
    assert (out / "notes.txt").read_text() == "x"


def _marked_model(tmp_path: Path) -> Path:
    """A folder as an older pictorank wrote models: a marker that names no kind, and the model."""
    model = tmp_path / "model"
    model.mkdir()
    (model / ".pictorank").write_text("Written by pictorank, which replaces this folder whole when it writes here again.\n")
    (model / "ranker.json").write_text("{}")
    return model


@pytest.mark.parametrize("force", [False, True])
def test_a_report_never_replaces_the_model_it_evaluates(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    model = _marked_model(tmp_path)
    assert main(_report_args(tmp_path, data_dir, model, "--model", str(model), *(["--force"] if force else []))) == 2
    assert_one_line_error(capsys.readouterr().err, "which this command reads")
    assert (model / "ranker.json").read_text() == "{}"


def test_a_report_does_not_replace_a_model_folder_unasked(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _marked_model(tmp_path)
    assert main(_report_args(tmp_path, data_dir, model, "--method", "cosine")) == 2
    assert_one_line_error(capsys.readouterr().err, "holds a pictorank model")
    assert (model / "ranker.json").read_text() == "{}"


def test_output_inside_the_model_folder_is_refused(tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str]) -> None:
    model = _marked_model(tmp_path)
    args = _predict_args(tmp_path, str(model / "ranker.json")) + ["--model", str(model)]
    assert main(args) == 2
    assert_one_line_error(capsys.readouterr().err, "lies inside")
    assert (model / "ranker.json").read_text() == "{}"


@pytest.mark.parametrize("kind", ["name of 300 characters", "symlink loop"])
def test_unusable_output_paths_are_one_line_errors(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    output = tmp_path / ("a" * 300)
    if kind == "symlink loop":
        output = tmp_path / "loop"
        output.symlink_to(output)
    assert main(_predict_args(tmp_path, str(output))) == 2
    assert_one_line_error(capsys.readouterr().err, "cannot be used as an output path")


@pytest.mark.parametrize("where", ["option", "environment"])
def test_a_cache_dir_that_is_a_file_fails_before_any_work(
    tmp_path: Path, no_model: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Found only when the cache was saved, it ended the run after the ranking, with no output."""
    (tmp_path / "a_file").write_text("x")
    args = [a for a in _predict_args(tmp_path, str(tmp_path / "out.csv")) if a != "--no-cache"]
    if where == "option":
        args += ["--cache-dir", str(tmp_path / "a_file")]
    else:
        monkeypatch.setenv("PICTORANK_CACHE_DIR", str(tmp_path / "a_file" / "sub"))
    assert main(args) == 2
    assert_one_line_error(capsys.readouterr().err, "a_file")


def test_a_long_legal_output_name_is_written(tmp_path: Path, session_model: object) -> None:
    """250 characters is a legal name; the temporary file beside it must not be longer than 255."""
    output = tmp_path / ("a" * 250)
    assert main(_predict_args(tmp_path, str(output))) == 0
    assert output.read_text().startswith("datapointID,subtaskID,answer")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_header_only_input_is_an_error_for_every_command(tmp_path: Path, data_dir: Path, no_model: None, capsys) -> None:
    empty = write_rows(tmp_path / "empty.csv", [])
    hints = str(data_dir / "hint_descriptions.csv")
    for args in (["evaluate", "--input", str(empty), "--hints", hints, "--no-cache"],
                 ["predict", "--input", str(empty), "--hints", hints, "--output", str(tmp_path / "s.csv"), "--no-cache"],
                 ["train", "--train", str(empty), "--val", str(empty), "--hints", hints, "--out", str(tmp_path / "m"), "--no-cache"]):
        assert main(args) == 2
        assert_one_line_error(capsys.readouterr().err, "no puzzles in file")
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "m").exists()


def test_compare_refuses_a_model_folder_named_like_a_compared_method(
    tmp_path: Path, data_dir: Path, no_model: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--methods cosine --models cosine` printed the model's figures as cosine's, and no cosine."""
    monkeypatch.chdir(tmp_path)
    _marked_model(tmp_path).rename(tmp_path / "cosine")
    args = ["compare", "--input", str(val_slice(data_dir, tmp_path, 3)), "--hints", str(data_dir / "hint_descriptions.csv"),
            "--methods", "seed", "cosine", "--models", "cosine", "--no-cache", "--quiet"]
    assert main(args) == 2
    assert_one_line_error(capsys.readouterr().err, "named like the method 'cosine'")


def test_sigterm_while_writing_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, session_model: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`timeout`, `docker stop` and systemd send SIGTERM: it ran no cleanup and left .tmp files."""
    import csv
    import signal

    output = tmp_path / "out.csv"
    output.write_text("the user's file\n")
    writerows = csv.DictWriter.writerows

    def terminated_midway(self, rows):
        writerows(self, rows[:1])
        os.kill(os.getpid(), signal.SIGTERM)
        writerows(self, rows[1:])

    def unhandled(signum: int, frame: object) -> None:
        pytest.fail("SIGTERM reached the test: the command did not handle it")

    args = _predict_args(tmp_path, str(output))  # writes the input files: before the patch
    monkeypatch.setattr(csv.DictWriter, "writerows", terminated_midway)
    previous = signal.signal(signal.SIGTERM, unhandled)
    try:
        assert main(args) == 143
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert capsys.readouterr().err.strip() == "pictorank: terminated"
    assert output.read_text() == "the user's file\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_model_folders_are_named_by_their_short_names_in_tables() -> None:
    from pictorank.cli import model_labels
    from pictorank.evaluation import evaluate_rankings, format_table
    from pictorank.puzzles import Puzzle

    labels = model_labels(["/tmp/runs/a/model", "/tmp/runs/b/model/", "/tmp/x/model-default", "runs/cosine"], ["cosine"])
    assert labels == {"/tmp/runs/a/model": "a/model", "/tmp/runs/b/model/": "b/model",
                      "/tmp/x/model-default": "model-default", "runs/cosine": "runs/cosine"}
    puzzles = [Puzzle("p1", 1, (1,), ("seal", "rose"), "seal")]
    result = evaluate_rankings(puzzles, [["seal", "rose"]])
    lines = format_table({"cosine": result, "a-model-folder-with-a-name-of-forty-chars": result}).splitlines()
    assert len({len(line) for line in lines}) == 1  # every row as wide as the header: columns aligned


def test_a_full_disk_is_one_line_not_a_traceback(monkeypatch, capsys, tmp_path) -> None:
    """A full or read-only disk under a command (the cache, the model folder) ended `train` in a
    traceback: it is one line naming the problem and the file, exit 1 (the system, not the input)."""
    import errno

    import pictorank.cli as cli

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "cache" / "model.onnx"))

    monkeypatch.setattr(cli, "train_model", full)
    code = cli.main(["train", "--train", str(DATA / "train.csv"), "--hints", str(DATA / "hint_descriptions.csv"),
                     "--out", str(tmp_path / "model")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "No space left on device" in err and "model.onnx" in err
