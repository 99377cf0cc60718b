"""The task's input files: puzzles (train/val/test CSVs) and the hint vocabulary, and the step
from a puzzle's hint ids to the :class:`~pictorank.query.Query` a ranker reads.

Everything that enters the program is checked here, once, so the rest of the package can trust
its inputs. Every problem is reported as a :class:`DataError` naming the file, the row (its
datapointID, or its line number when there is none) and the column.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from pictorank.errors import DataError
from pictorank.query import Query

PUZZLE_COLUMNS = ("datapointID", "subtaskID", "hints", "hints_json", "options", "options_json")
HINT_COLUMNS = ("hintID", "description")
# The csv module's own default limit, kept as ours and checked per field so that the error can
# name the column (the csv module's "field larger than field limit" names none).
MAX_FIELD_CHARS = 131_072
# Unicode's invisible characters (Default_Ignorable_Code_Point: zero-width spaces and joiners,
# fillers, variation selectors, bidi and tag controls), as a regex class; those of the Basic
# Multilingual Plane apart, since a JSON Schema pattern can only name those.
INVISIBLE_BMP = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                 "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8")
INVISIBLE = INVISIBLE_BMP + "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
_VISIBLE = re.compile(f"[^\\s{INVISIBLE}]")
_INVISIBLE_CHARACTERS = re.compile(f"[{INVISIBLE}]")
_INTEGER = re.compile(r"[0-9]+")  # plain ASCII digits: int() would also take '9_9_9' and '٣'
# Ids and subtasks are small numbers. A longer run of digits is refused before int() sees it:
# Python's int() raises a bare ValueError past 4,300 digits, which would reach the user as a
# traceback instead of an error naming the field.
MAX_INTEGER_DIGITS = 18


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


def read_csv(path: str | os.PathLike, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
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
    with _no_csv_field_limit():
        return _records(path, reader, required)


def visible_text(text: str) -> str:
    """`text` as a reader sees it: NFKC-normalised, invisible characters (zero-width spaces, soft
    hyphens, joiners, the Braille blank) removed. "ho\u200brse" is the word horse."""
    return _INVISIBLE_CHARACTERS.sub("", unicodedata.normalize("NFKC", text))


def is_blank(text: str) -> bool:
    """Nothing to read: only whitespace and invisible characters. str.strip() alone let a
    zero-width space through as a word while it refused a no-break space."""
    return _VISIBLE.search(text) is None


@contextmanager
def _no_csv_field_limit() -> Iterator[None]:
    """Let the csv module read any field; `_records` applies MAX_FIELD_CHARS itself, per column."""
    previous = csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _records(path: Path, reader: "csv._reader", required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
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
            too_long = [c for c, f in zip(header, fields) if len(f) > MAX_FIELD_CHARS]
            if too_long:
                raise DataError(path, f"line {reader.line_num}", too_long[0],
                                f"field longer than {MAX_FIELD_CHARS:,} characters")
            records.append((reader.line_num, dict(zip(header, fields))))
    except csv.Error as exc:
        raise DataError(path, f"line {reader.line_num}", None, f"not a readable CSV file ({exc})") from None
    return records


def load_hints(path: str | os.PathLike) -> HintVocabulary:
    """Load `hint_descriptions.csv` (hintID,description; descriptions may be CSV-quoted)."""
    descriptions: dict[int, str] = {}
    for line, record in read_csv(path, HINT_COLUMNS):
        raw_id, description = record["hintID"], record["description"]
        row = f"line {line}"
        hint_id = parse_integer(raw_id, path, row, "hintID")
        if hint_id in descriptions:
            raise DataError(path, row, "hintID", f"duplicate hintID {hint_id}")
        if is_blank(description):
            raise DataError(path, row, "description", f"empty description for hint {hint_id}")
        descriptions[hint_id] = description.strip()
    if not descriptions:
        raise DataError(path, None, None, "no hints in file")
    return HintVocabulary(descriptions)


def parse_integer(text: str, path: str | os.PathLike, row: str, column: str) -> int:
    """A non-negative integer written in ASCII digits (surrounding spaces allowed), or a DataError."""
    digits = text.strip()
    if not _INTEGER.fullmatch(digits):
        raise DataError(path, row, column, f"not an integer: {text[:50]!r}")
    if len(digits) > MAX_INTEGER_DIGITS:
        raise DataError(path, row, column, f"integer too large: {len(digits)} digits (at most {MAX_INTEGER_DIGITS})")
    return int(digits)


def split_pipe(text: str) -> list[str]:
    """The fields of a pipe-joined column; an empty column has none."""
    return text.split("|") if text != "" else []


def _json_integer(digits: str) -> int:
    """json.loads' integer parser, bounded as parse_integer is (see MAX_INTEGER_DIGITS)."""
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"integer too large: {len(digits.lstrip('-'))} digits (at most {MAX_INTEGER_DIGITS})")
    return int(digits)


def _parse_json_list(path: Path, row: str, column: str, text: str) -> list:
    try:
        value = json.loads(text, parse_int=_json_integer)
    except json.JSONDecodeError as exc:
        raise DataError(path, row, column, f"malformed JSON ({exc.msg} at char {exc.pos})") from None
    except ValueError as exc:  # from _json_integer
        raise DataError(path, row, column, str(exc)) from None
    except RecursionError:  # json.loads recurses once per level of nesting
        raise DataError(path, row, column, "JSON nested too deeply (a list of hint ids or options is flat)") from None
    if not isinstance(value, list):
        raise DataError(path, row, column, "expected a JSON list")
    return value


def _parse_hints(path: Path, row: str, piped: str, as_json: str, vocab: HintVocabulary | None) -> tuple[int, ...]:
    from_json = _parse_json_list(path, row, "hints_json", as_json)
    if not all(isinstance(h, int) and not isinstance(h, bool) for h in from_json):
        raise DataError(path, row, "hints_json", "hint ids must be integers")
    if not all(_INTEGER.fullmatch(h.strip()) for h in split_pipe(piped)):
        raise DataError(path, row, "hints", f"hint ids must be integers: {piped[:100]!r}")
    from_pipe = [parse_integer(h, path, row, "hints") for h in split_pipe(piped)]
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
    if split_pipe(piped) != from_json:
        raise DataError(path, row, "options", "disagrees with options_json")
    if not from_json:
        raise DataError(path, row, "options", "no options")
    if any(is_blank(o) for o in from_json):
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
    records = read_csv(path, PUZZLE_COLUMNS)
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
        subtask_id = parse_integer(record["subtaskID"], path, row, "subtaskID")
        hint_ids = _parse_hints(path, row, record["hints"], record["hints_json"], hints)
        options = _parse_options(path, row, record["options"], record["options_json"])
        answer = record.get("answer")
        if answer is not None:
            if answer not in options:
                raise DataError(path, row, "answer", f"answer {answer!r} is not among the options")
        puzzles.append(Puzzle(datapoint_id, subtask_id, hint_ids, options, answer))
    if not puzzles:
        raise DataError(path, None, None, "no puzzles in file (only a header)")
    return puzzles


def to_queries(puzzles: Sequence[Puzzle], vocab: HintVocabulary) -> list[Query]:
    """Replace each puzzle's hint ids by their descriptions: what rankers read."""
    return [Query(tuple(vocab.describe(p.hints)), p.options, p.answer) for p in puzzles]
