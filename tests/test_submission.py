"""submission.csv: the writer refuses invalid output and keeps the old file; the validator names each violation."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import puzzle_row, write_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictorank.errors import DataError
from pictorank.puzzles import Puzzle, is_blank, load_puzzles
from pictorank.submission import validate_submission, write_submission


# -- write_submission -------------------------------------------------------------------------


def make_puzzles(n: int = 3) -> list[Puzzle]:
    return [Puzzle(f"t{i}", 1 + i % 3, (1, 2), ("a", "b, c", 'd "e"', "é"), None) for i in range(n)]


def read_back(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_write_then_validate(tmp_path: Path) -> None:
    puzzles = make_puzzles()
    source = write_rows(tmp_path / "test.csv", [puzzle_row(p.datapoint_id, p.subtask_id, p.hints, p.options, None) for p in puzzles])
    out = tmp_path / "out" / "submission.csv"
    answers = [["é", "a"], ['d "e"'], ["b, c", "a", "é", 'd "e"']]
    write_submission(out, puzzles, answers)
    assert validate_submission(out, source) == []
    frame = read_back(out)
    assert list(frame.columns) == ["datapointID", "subtaskID", "answer"]
    assert frame["datapointID"].tolist() == ["t0", "t1", "t2"]
    assert [a.split("|") for a in frame["answer"]] == answers
    assert [p.name for p in out.parent.iterdir()] == ["submission.csv"]


@pytest.mark.parametrize(
    ("answers", "problem"),
    [
        ([["a"], ["a"]], "2 answer rows for 3 puzzles"),
        ([["a"], [], ["a"]], "row t1, column answer: 0 options, expected 1 to 10"),
        ([["a"], ["a", "a"], ["a"]], "row t1, column answer: repeated options"),
        ([["a"], ["zzz"], ["a"]], "row t1, column answer: not among the row's options: ['zzz']"),
    ],
)
def test_write_refuses_invalid_output_and_keeps_old_file(tmp_path: Path, answers: list, problem: str) -> None:
    out = tmp_path / "submission.csv"
    out.write_text("old content\n", encoding="utf-8")
    with pytest.raises(DataError, match="invalid submission") as caught:
        write_submission(out, make_puzzles(), answers)
    assert problem in str(caught.value)
    assert out.read_text(encoding="utf-8") == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["submission.csv"]


def test_write_refuses_more_than_ten(tmp_path: Path) -> None:
    options = tuple(f"o{i}" for i in range(11))
    puzzle = Puzzle("t0", 2, (1,), options, None)
    with pytest.raises(DataError, match="11 options, expected 1 to 10"):
        write_submission(tmp_path / "s.csv", [puzzle], [list(options)])
    assert not (tmp_path / "s.csv").exists()


def test_write_refuses_pipe_in_option(tmp_path: Path) -> None:
    puzzle = Puzzle("t0", 1, (1,), ("a|b", "c"), None)
    with pytest.raises(DataError, match="containing '\\|' cannot be written"):
        write_submission(tmp_path / "s.csv", [puzzle], [["a|b"]])


def test_failure_while_writing_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "submission.csv"
    out.write_text("old content\n", encoding="utf-8")

    def fail_midway(self: csv.DictWriter, rows: list) -> None:
        self.writerow(rows[0])
        raise OSError("disk full")

    monkeypatch.setattr(csv.DictWriter, "writerows", fail_midway)
    with pytest.raises(DataError, match=r"cannot write the submission \(disk full\)"):
        write_submission(out, make_puzzles(), [["a"], ["a"], ["a"]])
    assert out.read_text(encoding="utf-8") == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["submission.csv"]


def test_a_file_size_limit_while_writing_is_one_line(tmp_path: Path) -> None:
    """`ulimit -f` during `predict --output` ended in an OSError traceback (File too large)."""
    script = ("import resource, sys\n"
              "from pictorank.errors import DataError\n"
              "from pictorank.puzzles import Puzzle\n"
              "from pictorank.submission import write_submission\n"
              "puzzles = [Puzzle(f't{i}', 1, (1, 2), ('a' * 90, 'b'), None) for i in range(500)]\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
              "try:\n"
              "    write_submission(sys.argv[1], puzzles, [['a' * 90, 'b']] * 500)\n"
              "except DataError as exc:\n"
              "    print(exc)\n")
    out = tmp_path / "submission.csv"
    done = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.strip().endswith("cannot write the submission (File too large)")
    assert [p.name for p in tmp_path.iterdir()] == []


# Options as the task may give them: spaces, quotes, commas, non-ASCII; never '|' (refused on
# load), control characters, or nothing visible (blank under Unicode's definition, refused on load).
OPTION = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="|"),
    min_size=1,
    max_size=12,
).filter(lambda s: not is_blank(s))


@st.composite
def puzzles_and_answers(draw: st.DrawFn) -> tuple[list[Puzzle], list[list[str]]]:
    n = draw(st.integers(1, 5))
    puzzles, answers = [], []
    for i in range(n):
        options = draw(st.lists(OPTION, min_size=1, max_size=14, unique=True))
        ranked = draw(st.permutations(options))[: draw(st.integers(1, min(10, len(options))))]
        puzzles.append(Puzzle(f"id {i}, \"q\"", draw(st.integers(1, 3)), (1,), tuple(options), None))
        answers.append(list(ranked))
    return puzzles, answers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=puzzles_and_answers())
def test_property_write_validate_reread(tmp_path: Path, case: tuple[list[Puzzle], list[list[str]]]) -> None:
    puzzles, answers = case
    source = write_rows(
        tmp_path / "test.csv",
        [puzzle_row(p.datapoint_id, p.subtask_id, (1,), p.options, None) for p in puzzles],
    )
    assert [p.options for p in load_puzzles(source)] == [p.options for p in puzzles]
    out = tmp_path / "submission.csv"
    write_submission(out, puzzles, answers)
    assert validate_submission(out, source) == []
    frame = read_back(out)
    assert frame["datapointID"].tolist() == [p.datapoint_id for p in puzzles]
    assert frame["subtaskID"].tolist() == [str(p.subtask_id) for p in puzzles]
    assert [a.split("|") for a in frame["answer"]] == answers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["submission.csv", "test.csv"]


# -- validate_submission: one test per violation kind -----------------------------------------------


@pytest.fixture
def source(tmp_path: Path) -> Path:
    rows = [puzzle_row(f"t{i}", 1, (1, 2), tuple("abcdefghijkl"), None) for i in range(3)]
    return write_rows(tmp_path / "test.csv", rows)


def write_submission_text(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "submission.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = ["datapointID,subtaskID,answer", "t0,1,a|b", "t1,1,c", "t2,1,b|a|c"]
VIOLATIONS = {
    "too many": (["t0,1," + "|".join("abcdefghijk")], "row t0, column answer: 11 options, expected 1 to 10"),
    "zero": (["t0,1,"], "row t0, column answer: 0 options, expected 1 to 10"),
    "repeats": (["t0,1,a|b|a"], "row t0, column answer: repeated options"),
    "foreign option": (["t0,1,a|zebra"], "row t0, column answer: not among the row's options: ['zebra']"),
    "wrong subtaskID": (["t0,3,a"], "row t0, column subtaskID: '3', expected 1"),
    "extra row": (["t0,1,a", "t9,1,a"], "row t9, column datapointID: not in test.csv"),
    "duplicate row": (["t0,1,a", "t0,1,b"], "row t0, column datapointID: duplicate row"),
}


@pytest.mark.parametrize("kind", sorted(VIOLATIONS))
def test_validate_reports_each_violation(tmp_path: Path, source: Path, kind: str) -> None:
    lines, expected = VIOLATIONS[kind]
    path = write_submission_text(tmp_path, [GOOD[0], *lines, *GOOD[2:]])
    assert validate_submission(path, source) == [expected]


def test_validate_accepts_good_file(tmp_path: Path, source: Path) -> None:
    assert validate_submission(write_submission_text(tmp_path, GOOD), source) == []
    spaced = [GOOD[0], " t0 , 1 ,a|b", *GOOD[2:]]  # spaces around the ids, in either column
    assert validate_submission(write_submission_text(tmp_path, spaced), source) == []


def test_validate_keeps_each_problem_line_short(tmp_path: Path, source: Path) -> None:
    problems = validate_submission(write_submission_text(tmp_path, [GOOD[0], "t0,1," + "|" * 100_000, *GOOD[2:]]), source)
    assert problems[-1] == "row t0, column answer: not among the row's options: ['', '', ''] and 99998 more"
    assert all(len(problem) < 200 for problem in problems)


def test_validate_missing_row(tmp_path: Path, source: Path) -> None:
    path = write_submission_text(tmp_path, GOOD[:2])
    assert validate_submission(path, source) == ["2 input rows have no submission row, first: ['t1', 't2']"]


def test_validate_missing_column(tmp_path: Path, source: Path) -> None:
    path = write_submission_text(tmp_path, ["datapointID,answer", "t0,a"])
    assert validate_submission(path, source) == ["column subtaskID: missing required column(s)"]


def test_validate_bad_input_file_raises(tmp_path: Path) -> None:
    bad = write_rows(tmp_path / "test.csv", [puzzle_row(subtask_id="x", answer=None)])
    with pytest.raises(DataError, match="subtaskID"):
        validate_submission(write_submission_text(tmp_path, GOOD), bad)


def test_validate_bundled_style_options(tmp_path: Path) -> None:
    """Options from the bundled data survive CSV quoting in both directions."""
    options = ("activity centre (children)", "fish, smoked", 'a "quoted" word')
    source = write_rows(tmp_path / "test.csv", [puzzle_row("t0", 1, (1,), options, None)])
    out = tmp_path / "submission.csv"
    write_submission(out, load_puzzles(source), [list(reversed(options))])
    assert validate_submission(out, source) == []
    assert read_back(out)["answer"][0].split("|") == list(reversed(options))
