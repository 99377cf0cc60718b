"""The data contract: every malformed input names file, row and column; output is always valid."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from helpers import puzzle_row, write_hints, write_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictorank import puzzles
from pictorank.errors import DataError
from pictorank.puzzles import MAX_FIELD_CHARS, HintVocabulary, Puzzle, load_hints, load_puzzles, to_queries
from pictorank.query import Query


@pytest.fixture
def hints_path(tmp_path: Path) -> Path:
    return write_hints(tmp_path / "hint_descriptions.csv")


def load_error(path: Path, hints_path: Path | None = None) -> DataError:
    vocab = load_hints(hints_path) if hints_path else None
    with pytest.raises(DataError) as caught:
        load_puzzles(path, vocab)
    return caught.value


# -- hint descriptions ---------------------------------------------------------------------------


def test_descriptions_with_commas_and_quotes_load(hints_path: Path) -> None:
    vocab = load_hints(hints_path)
    assert len(vocab) == 4
    assert vocab.describe([2, 3]) == ["water, sea, ocean", 'hair, "fur"']


def test_bundled_hint_descriptions_keep_their_commas(data_dir: Path) -> None:
    vocab = load_hints(data_dir / "hint_descriptions.csv")
    assert vocab.descriptions[2] == "percent, percentage, %"


@pytest.mark.parametrize(
    ("text", "row", "column", "problem"),
    [
        ("hintID,description\n1,cat\nx,dog\n", "line 3", "hintID", "not an integer: 'x'"),
        ("hintID,description\n9_9_9,cat\n", "line 2", "hintID", "not an integer: '9_9_9'"),
        ("hintID,description\n\u0663,cat\n", "line 2", "hintID", "not an integer: '\u0663'"),
        ("hintID,description\n" + "9" * 5000 + ",cat\n", "line 2", "hintID", "integer too large: 5000 digits (at most 18)"),
        ("hintID,description\n1,cat\n1,dog\n", "line 3", "hintID", "duplicate hintID 1"),
        ("hintID,description\n1, \n", "line 2", "description", "empty description for hint 1"),
        ("hintID\n1\n", None, "description", "missing required column(s)"),
        ("hintID,description\n", None, None, "no hints in file"),
    ],
)
def test_bad_hint_files(tmp_path: Path, text: str, row: str | None, column: str | None, problem: str) -> None:
    path = write_hints(tmp_path / "h.csv", text)
    with pytest.raises(DataError) as caught:
        load_hints(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), row, column)
    assert caught.value.problem == problem


def test_describe_unknown_id(hints_path: Path) -> None:
    with pytest.raises(KeyError, match=r"\[99\]"):
        load_hints(hints_path).describe([1, 99])


# -- puzzle files: one test per malformed case ------------------------------------------------------


def test_valid_file_loads(tmp_path: Path, hints_path: Path) -> None:
    rows = [puzzle_row("v1"), puzzle_row("v2", 2, (4, 1, 3), ("flame", 'the "big" one', "a, b", "café"), "café")]
    puzzles = load_puzzles(write_rows(tmp_path / "val.csv", rows), load_hints(hints_path))
    assert puzzles == [
        Puzzle("v1", 1, (1, 2), ("seal", "fish", "candle", "rock"), "seal"),
        Puzzle("v2", 2, (4, 1, 3), ("flame", 'the "big" one', "a, b", "café"), "café"),
    ]


def test_test_file_without_answers(tmp_path: Path) -> None:
    puzzles = load_puzzles(write_rows(tmp_path / "test.csv", [puzzle_row(answer=None)]))
    assert puzzles[0].answer is None


BAD_ROWS = {
    "hints disagree with hints_json": (puzzle_row(hints="1|3"), "hints", "disagrees with hints_json"),
    "options disagree with options_json": (
        puzzle_row(options="seal|fish|candle"),
        "options",
        "disagrees with options_json",
    ),
    "malformed hints_json": (puzzle_row(hints_json="[1, 2"), "hints_json", "malformed JSON"),
    "malformed options_json": (puzzle_row(options_json='["seal", fish]'), "options_json", "malformed JSON"),
    "hints_json not a list": (puzzle_row(hints_json='{"a": 1}'), "hints_json", "expected a JSON list"),
    "hint ids not integers": (puzzle_row(hints="1|2", hints_json='["1", "2"]'), "hints_json", "must be integers"),
    "piped hint ids not integers": (puzzle_row(hints="1|b"), "hints", "hint ids must be integers"),
    "no hints": (puzzle_row(hint_ids=(), choices=("a", "b"), answer="a"), "hints", "no hints"),
    "unknown hint id": (puzzle_row(hint_ids=(1, 99)), "hints", "hint ids not in hint_descriptions.csv: [99]"),
    "empty options": (puzzle_row(choices=(), answer=""), "options", "no options"),
    "blank option": (puzzle_row(choices=("seal", " "), answer="seal"), "options", "empty option"),
    "zero-width option": (puzzle_row(choices=("seal", "\u200b\u2060"), answer="seal"), "options", "empty option"),
    "repeated options": (puzzle_row(choices=("seal", "fish", "seal")), "options", "repeated option(s): ['seal']"),
    "option containing a pipe": (
        puzzle_row(choices=("seal", "fish|chips")),
        "options_json",
        "option contains '|'",
    ),
    "options not strings": (puzzle_row(options="1|2", options_json="[1, 2]"), "options_json", "must be strings"),
    "answer not among options": (puzzle_row(answer="whale"), "answer", "'whale' is not among the options"),
    # the answer must be an option exactly: not blank, not in another case, not padded
    "empty answer": (puzzle_row(answer=""), "answer", "'' is not among the options"),
    "answer in another case": (puzzle_row(answer="Seal"), "answer", "'Seal' is not among the options"),
    "answer with spaces": (puzzle_row(answer=" seal "), "answer", "' seal ' is not among the options"),
    "piped hint ids with underscores": (puzzle_row(hints="1|9_9_9", hints_json="[1, 999]"), "hints", "must be integers"),
    "piped hint ids in other digits": (puzzle_row(hints="1|\u0662", hints_json="[1, 2]"), "hints", "must be integers"),
    "subtaskID in other digits": (puzzle_row(subtask_id="\u0661"), "subtaskID", "not an integer"),
    "non-integer subtaskID": (puzzle_row(subtask_id="two"), "subtaskID", "not an integer: 'two'"),
    "fractional subtaskID": (puzzle_row(subtask_id="1.5"), "subtaskID", "not an integer: '1.5'"),
    # past 4,300 digits int() raises a bare ValueError; deep JSON nesting a RecursionError
    "subtaskID of 5000 digits": (puzzle_row(subtask_id="9" * 5000), "subtaskID", "integer too large: 5000 digits"),
    "piped hint id of 5000 digits": (puzzle_row(hints="1|" + "9" * 5000), "hints", "integer too large"),
    "hints_json id of 5000 digits": (puzzle_row(hints_json="[1, " + "9" * 5000 + "]"), "hints_json", "integer too large"),
    "hints_json nested 60000 deep": (puzzle_row(hints_json="[" * 60000 + "]" * 60000), "hints_json", "nested too deeply"),
    "options_json nested 60000 deep": (puzzle_row(options_json="[" * 60000 + "]" * 60000), "options_json",
                                       "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_bad_row_names_file_row_and_column(tmp_path: Path, hints_path: Path, case: str) -> None:
    bad_row, column, problem = BAD_ROWS[case]
    bad_row["datapointID"] = "v2"
    path = write_rows(tmp_path / "val.csv", [puzzle_row("v1"), bad_row, puzzle_row("v3")])
    error = load_error(path, hints_path)
    assert (error.file, error.row, error.column) == (str(path), "v2", column)
    assert problem in error.problem
    assert str(error).startswith(f"{path}, row v2, column {column}: ")


def test_duplicate_datapoint_id(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "val.csv", [puzzle_row("v1"), puzzle_row("v2"), puzzle_row("v1")])
    error = load_error(path)
    assert (error.row, error.column, error.problem) == ("v1", "datapointID", "duplicate datapointID")


def test_empty_datapoint_id_is_named_by_line(tmp_path: Path) -> None:
    error = load_error(write_rows(tmp_path / "val.csv", [puzzle_row("v1"), puzzle_row(" ")]))
    assert (error.row, error.column) == ("line 3", "datapointID")


@pytest.mark.parametrize("column", ["hints_json", "options", "datapointID"])
def test_missing_column(tmp_path: Path, column: str) -> None:
    columns = [c for c in (*puzzles.PUZZLE_COLUMNS, "answer") if c != column]
    error = load_error(write_rows(tmp_path / "val.csv", [puzzle_row()], columns))
    assert (error.row, error.column, error.problem) == (None, column, "missing required column(s)")


def test_row_with_wrong_number_of_fields(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "val.csv", [puzzle_row("v1")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("v2,1,1|2\n")
    error = load_error(path)
    assert (error.row, error.column, error.problem) == ("line 3", None, "3 fields, the header has 7")


def test_non_utf8_file(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "val.csv", [puzzle_row("v1")])
    path.write_bytes(path.read_bytes() + "v2,1,1|2,\"[1, 2]\",café|x,\"[\"\"café\"\", \"\"x\"\"]\",x\n".encode("latin-1"))
    error = load_error(path)
    assert (error.file, error.row, error.column) == (str(path), "line 3", None)
    assert error.problem == "file is not valid UTF-8"


def test_non_utf8_hint_file(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_bytes("hintID,description\n1,café\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"h.csv, row line 2: file is not valid UTF-8"):
        load_hints(path)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read file"):
        load_puzzles(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty file"):
        load_puzzles(tmp_path / "empty.csv")


def test_header_only_file_is_an_error(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "val.csv", [])
    with pytest.raises(DataError, match=r"val.csv: no puzzles in file \(only a header\)"):
        load_puzzles(path)


def test_overlong_field_names_its_column(tmp_path: Path) -> None:
    """The csv module's own limit error names no column; ours does, and says the limit."""
    path = write_rows(tmp_path / "val.csv", [puzzle_row("v1", datapointID="x" * (MAX_FIELD_CHARS + 1))])
    with pytest.raises(DataError, match=r"row line 2, column datapointID: field longer than 131,072 characters"):
        load_puzzles(path)
    ok = write_rows(tmp_path / "ok.csv", [puzzle_row("x" * MAX_FIELD_CHARS)])
    assert len(load_puzzles(ok)[0].datapoint_id) == MAX_FIELD_CHARS


def test_bom_and_blank_lines_are_tolerated(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "val.csv", [puzzle_row("v1")])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b"\n")
    assert [p.datapoint_id for p in load_puzzles(path)] == ["v1"]


def test_bundled_files_load(val_puzzles: list[Puzzle], train_puzzles: list[Puzzle]) -> None:
    assert (len(train_puzzles), len(val_puzzles)) == (2111, 563)
    assert {len(p.options) for p in val_puzzles} == {4, 10, 30}


def test_to_queries_uses_descriptions(vocab: HintVocabulary) -> None:
    puzzle = Puzzle("x", 1, (2, 1), ("a", "b"), "a")
    (query,) = to_queries([puzzle], vocab)
    assert query == Query((vocab.descriptions[2], vocab.descriptions[1]), ("a", "b"), "a")
