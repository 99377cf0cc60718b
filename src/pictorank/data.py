"""The task's files: puzzles, the hint vocabulary, and the submission writer and validator.

Everything that crosses the boundary of the program is checked here, once, so the rest of the
package can trust its inputs. Every problem is reported as a :class:`DataError` naming the file,
the row (its datapointID, or its line number when there is none) and the column.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

MAX_ANSWERS = 10
PUZZLE_COLUMNS = ("datapointID", "subtaskID", "hints", "hints_json", "options", "options_json")
HINT_COLUMNS = ("hintID", "description")
SUBMISSION_COLUMNS = ("datapointID", "subtaskID", "answer")


class DataError(ValueError):
    """An input file breaks the data contract; the message names file, row and column."""

    def __init__(self, file: str | os.PathLike, row: str | None, column: str | None, problem: str):
        self.file = str(file)
        self.row = row
        self.column = column
        self.problem = problem
        super().__init__(f"{', '.join([self.file, *self.location()])}: {problem}")

    def location(self) -> list[str]:
        """The row and column parts of the message, when known."""
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column {self.column}")
        return where


@dataclass(frozen=True)
class Puzzle:
    """One clue: ordered hint ids (main idea first), the candidate options, maybe the answer."""

    datapoint_id: str
    subtask_id: int
    hints: tuple[int, ...]
    options: tuple[str, ...]
    answer: str | None = None


@dataclass(frozen=True)
class HintVocabulary:
    """The pictograms' text descriptions, by hint id."""

    descriptions: dict[int, str]

    def describe(self, hints: Sequence[int]) -> list[str]:
        """Descriptions of `hints` in order; raises KeyError naming any unknown id."""
        unknown = [h for h in hints if h not in self.descriptions]
        if unknown:
            raise KeyError(f"unknown hint ids: {unknown}")
        return [self.descriptions[h] for h in hints]

    def __contains__(self, hint_id: object) -> bool:
        return hint_id in self.descriptions

    def __len__(self) -> int:
        return len(self.descriptions)


def _read_csv(path: str | os.PathLike, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Read a CSV as (line number, {column: text}) records, insisting on UTF-8 and on the columns.

    The csv module rather than pandas: pandas silently turns a row with one field too many into
    an index column and misnames every field, while here each row must match the header.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(path, None, None, f"cannot read file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(path, f"line {line}", None, "file is not valid UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise DataError(path, None, None, "empty file, expected a header line")
        repeated = sorted({c for c in header if header.count(c) > 1})
        if repeated:
            raise DataError(path, "line 1", ", ".join(repeated), "column name repeated in the header")
        missing = [c for c in required if c not in header]
        if missing:
            raise DataError(path, None, ", ".join(missing), "missing required column(s)")
        records = []
        for fields in reader:
            if not fields:
                continue  # a blank line
            if len(fields) != len(header):
                raise DataError(
                    path, f"line {reader.line_num}", None, f"{len(fields)} fields, the header has {len(header)}"
                )
            records.append((reader.line_num, dict(zip(header, fields))))
    except csv.Error as exc:
        raise DataError(path, f"line {reader.line_num}", None, f"not a readable CSV file ({exc})") from None
    return records


def load_hints(path: str | os.PathLike) -> HintVocabulary:
    """Load `hint_descriptions.csv` (hintID,description; descriptions may be CSV-quoted)."""
    descriptions: dict[int, str] = {}
    for line, record in _read_csv(path, HINT_COLUMNS):
        raw_id, description = record["hintID"], record["description"]
        row = f"line {line}"
        try:
            hint_id = int(raw_id)
        except ValueError:
            raise DataError(path, row, "hintID", f"not an integer: {raw_id!r}") from None
        if hint_id in descriptions:
            raise DataError(path, row, "hintID", f"duplicate hintID {hint_id}")
        if not description.strip():
            raise DataError(path, row, "description", f"empty description for hint {hint_id}")
        descriptions[hint_id] = description.strip()
    if not descriptions:
        raise DataError(path, None, None, "no hints in file")
    return HintVocabulary(descriptions)


def _split_pipe(text: str) -> list[str]:
    return text.split("|") if text != "" else []


def _parse_json_list(path: Path, row: str, column: str, text: str) -> list:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, row, column, f"malformed JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(value, list):
        raise DataError(path, row, column, "expected a JSON list")
    return value


def _parse_hints(path: Path, row: str, piped: str, as_json: str, vocab: HintVocabulary | None) -> tuple[int, ...]:
    from_json = _parse_json_list(path, row, "hints_json", as_json)
    if not all(isinstance(h, int) and not isinstance(h, bool) for h in from_json):
        raise DataError(path, row, "hints_json", "hint ids must be integers")
    try:
        from_pipe = [int(h) for h in _split_pipe(piped)]
    except ValueError:
        raise DataError(path, row, "hints", f"hint ids must be integers: {piped!r}") from None
    if from_pipe != from_json:
        raise DataError(path, row, "hints", f"disagrees with hints_json: {piped!r} vs {as_json!r}")
    if not from_json:
        raise DataError(path, row, "hints", "no hints")
    if vocab is not None:
        unknown = [h for h in from_json if h not in vocab]
        if unknown:
            raise DataError(path, row, "hints", f"hint ids not in hint_descriptions.csv: {unknown}")
    return tuple(from_json)


def _parse_options(path: Path, row: str, piped: str, as_json: str) -> tuple[str, ...]:
    from_json = _parse_json_list(path, row, "options_json", as_json)
    if not all(isinstance(o, str) for o in from_json):
        raise DataError(path, row, "options_json", "options must be strings")
    piped_options = [o for o in from_json if "|" in o]
    if piped_options:
        # The `options` column and submission.csv both join options with '|': such an option
        # could never be written back unambiguously, so it is refused at the door.
        raise DataError(path, row, "options_json", f"option contains '|', which separates options: {piped_options[0]!r}")
    if _split_pipe(piped) != from_json:
        raise DataError(path, row, "options", "disagrees with options_json")
    if not from_json:
        raise DataError(path, row, "options", "no options")
    if any(not o.strip() for o in from_json):
        raise DataError(path, row, "options", "empty option")
    repeated = sorted({o for o in from_json if from_json.count(o) > 1})
    if repeated:
        raise DataError(path, row, "options", f"repeated option(s): {repeated}")
    return tuple(from_json)


def load_puzzles(path: str | os.PathLike, hints: HintVocabulary | None = None) -> list[Puzzle]:
    """Load a train/val/test CSV, checking every row; `answer` is read when the column exists.

    When `hints` is given, every hint id must be in it (so ranking can never hit an unknown id).
    """
    path = Path(path)
    records = _read_csv(path, PUZZLE_COLUMNS)
    puzzles: list[Puzzle] = []
    seen: set[str] = set()
    for line, record in records:
        datapoint_id = record["datapointID"].strip()
        if not datapoint_id:
            raise DataError(path, f"line {line}", "datapointID", "empty datapointID")
        row = datapoint_id
        if datapoint_id in seen:
            raise DataError(path, row, "datapointID", "duplicate datapointID")
        seen.add(datapoint_id)
        try:
            subtask_id = int(record["subtaskID"])
        except ValueError:
            raise DataError(path, row, "subtaskID", f"not an integer: {record['subtaskID']!r}") from None
        hint_ids = _parse_hints(path, row, record["hints"], record["hints_json"], hints)
        options = _parse_options(path, row, record["options"], record["options_json"])
        answer = record.get("answer")
        if answer is not None:
            if answer not in options:
                raise DataError(path, row, "answer", f"answer {answer!r} is not among the options")
        puzzles.append(Puzzle(datapoint_id, subtask_id, hint_ids, options, answer))
    return puzzles


def submission_problems(puzzles: Sequence[Puzzle], answers: Sequence[Sequence[str]]) -> list[str]:
    """Every way `answers` (one ranked list per puzzle, in order) breaks the output rules."""
    problems: list[str] = []
    if len(answers) != len(puzzles):
        problems.append(f"{len(answers)} answer rows for {len(puzzles)} puzzles")
    for puzzle, ranked in zip(puzzles, answers):
        where = f"row {puzzle.datapoint_id}, column answer"
        if not 1 <= len(ranked) <= MAX_ANSWERS:
            problems.append(f"{where}: {len(ranked)} options, expected 1 to {MAX_ANSWERS}")
        if len(set(ranked)) != len(ranked):
            problems.append(f"{where}: repeated options")
        foreign = [o for o in ranked if o not in puzzle.options]
        if foreign:
            problems.append(f"{where}: not among the row's options: {foreign}")
    return problems


def write_submission(path: str | os.PathLike, puzzles: Sequence[Puzzle], answers: Sequence[Sequence[str]]) -> None:
    """Write submission.csv atomically, after checking every output rule.

    Options may contain '|' only if the task allowed it; it does not, so such an option is an error
    here rather than a silently unparseable file.
    """
    problems = submission_problems(puzzles, answers)
    piped = [o for ranked in answers for o in ranked if "|" in o]
    if piped:
        problems.append(f"options containing '|' cannot be written: {piped[:3]}")
    if problems:
        raise DataError(path, None, None, "invalid submission: " + "; ".join(problems[:5]))
    rows = [
        {"datapointID": p.datapoint_id, "subtaskID": p.subtask_id, "answer": "|".join(ranked)}
        for p, ranked in zip(puzzles, answers)
    ]
    _atomic_write_csv(Path(path), SUBMISSION_COLUMNS, rows)


def _atomic_write_csv(path: Path, columns: Iterable[str], rows: list[dict]) -> None:
    """Write to a temporary file beside `path`, then rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(columns))
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def validate_submission(submission_path: str | os.PathLike, input_path: str | os.PathLike) -> list[str]:
    """Check a written submission.csv against its input file; returns every violation found.

    A bad input file raises DataError (nothing can be checked); a submission that cannot even be
    read as the output format (wrong columns, not UTF-8) is itself a violation and is returned.
    """
    puzzles = load_puzzles(input_path)
    try:
        records = _read_csv(submission_path, SUBMISSION_COLUMNS)
    except DataError as exc:
        where = ", ".join(exc.location())
        return [f"{where}: {exc.problem}" if where else exc.problem]
    problems: list[str] = []
    by_id = {p.datapoint_id: p for p in puzzles}
    seen: set[str] = set()
    for line, record in records:
        datapoint_id = record["datapointID"].strip()
        where = f"row {datapoint_id or f'line {line}'}"
        puzzle = by_id.get(datapoint_id)
        if puzzle is None:
            problems.append(f"{where}, column datapointID: not in {Path(input_path).name}")
            continue
        if datapoint_id in seen:
            problems.append(f"{where}, column datapointID: duplicate row")
            continue
        seen.add(datapoint_id)
        if record["subtaskID"] != str(puzzle.subtask_id):
            problems.append(f"{where}, column subtaskID: {record['subtaskID']!r}, expected {puzzle.subtask_id}")
        problems.extend(submission_problems([puzzle], [_split_pipe(record["answer"])]))
    missing = [p.datapoint_id for p in puzzles if p.datapoint_id not in seen]
    if missing:
        problems.append(f"{len(missing)} input rows have no submission row, first: {missing[:3]}")
    return problems
