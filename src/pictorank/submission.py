"""submission.csv: the output rules, the atomic writer that enforces them, and the validator.

The rules (one row per input row, 1 to 10 distinct options of that row joined by '|') are checked
before anything is written, and the file appears whole or not at all.
"""

from __future__ import annotations

import csv
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

from pictorank.errors import DataError
from pictorank.puzzles import Puzzle, load_puzzles, read_csv, split_pipe

MAX_ANSWERS = 10
SUBMISSION_COLUMNS = ("datapointID", "subtaskID", "answer")


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
            problems.append(f"{where}: not among the row's options: {_some(foreign)}")
    return problems


def _some(values: Sequence[str], shown: int = 3, chars: int = 50) -> str:
    """The first few values, each cut short: one problem line stays readable whatever the file holds
    (an answer of 100,000 '|' is 100,001 foreign options)."""
    cut = [v if len(v) <= chars else v[:chars] + "..." for v in values[:shown]]
    return f"{cut}" + (f" and {len(values) - shown} more" if len(values) > shown else "")


def checked_output(path: str | os.PathLike, inputs: Sequence[str | os.PathLike] = ()) -> Path:
    """The real file an output path writes to, or a DataError saying why it must not be written.

    Called before any work, so a bad `--output` fails in a second rather than after the ranking.
    A symlink is followed (the file it points to is replaced, the link stays); anything that is not
    a regular file (a folder, a device such as /dev/null, a pipe) is refused, and so is any of the
    `inputs` or a path inside one of them (a model folder the command reads): pictorank never
    writes over what it reads.
    """
    try:
        return _checked_output(path, inputs)
    except (OSError, RuntimeError) as exc:  # a name too long for the file system; a symlink loop
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise DataError(path, None, None, f"cannot be used as an output path ({reason})") from None


def _checked_output(path: str | os.PathLike, inputs: Sequence[str | os.PathLike]) -> Path:
    target = Path(path).resolve()
    if target.exists() and not target.is_file():
        raise DataError(path, None, None, "exists and is not a regular file (a folder, device or pipe); choose another output path")
    for source in inputs:
        read = Path(source).resolve()
        if target == read:
            raise DataError(path, None, None, f"is the input file {source}; choose another output path")
        if read in target.parents:
            raise DataError(path, None, None, f"lies inside {source}, which this command reads; choose another output path")
    ancestor = next(p for p in (target, *target.parents) if p.exists())
    if ancestor != target and not ancestor.is_dir():
        raise DataError(path, None, None, f"cannot be created: {ancestor} is a file, not a folder")
    if not os.access(ancestor if ancestor != target else target.parent, os.W_OK):
        raise DataError(path, None, None, f"cannot be written: no write permission in {ancestor if ancestor != target else target.parent}")
    return target


def _temporary_prefix(path: Path) -> str:
    """The temporary file's name up to its random part: `.submission.csv.` for submission.csv.
    A long name is cut: a legal 250-character name would make a temporary name too long to create."""
    return f".{path.name[:100]}."


def write_submission(
    path: str | os.PathLike, puzzles: Sequence[Puzzle], answers: Sequence[Sequence[str]],
    inputs: Sequence[str | os.PathLike] = (),
) -> None:
    """Write submission.csv atomically, after checking every output rule and the path itself
    (see `checked_output`; `inputs` are the files it must not overwrite).

    Options may contain '|' only if the task allowed it; it does not, so such an option is an error
    here rather than a silently unparseable file.
    """
    target = checked_output(path, inputs)
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
    try:
        _atomic_write_csv(target, SUBMISSION_COLUMNS, rows)
    except OSError as exc:  # a full disk, a file-size limit: one line, as a report's write failure
        raise DataError(path, None, None, f"cannot write the submission ({exc.strerror or exc})") from None


def _atomic_write_csv(path: Path, columns: Iterable[str], rows: list[dict]) -> None:
    """Write to a temporary file beside `path`, then rename: readers never see half a file.

    The file keeps the mode of the one it replaces; a new one gets the usual mode for the user's
    umask (mkstemp alone would make it private, 0600).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(path), suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(columns))
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask (only readable by setting it; set back at once)."""
    current = os.umask(0o022)
    os.umask(current)
    return current


def validate_submission(submission_path: str | os.PathLike, input_path: str | os.PathLike) -> list[str]:
    """Check a written submission.csv against its input file; returns every violation found.

    A bad input file raises DataError (nothing can be checked); a submission that cannot even be
    read as the output format (wrong columns, not UTF-8) is itself a violation and is returned.
    """
    puzzles = load_puzzles(input_path)
    try:
        records = read_csv(submission_path, SUBMISSION_COLUMNS)
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
        if record["subtaskID"].strip() != str(puzzle.subtask_id):  # spaces allowed, as around datapointID
            problems.append(f"{where}, column subtaskID: {record['subtaskID'][:50]!r}, expected {puzzle.subtask_id}")
        problems.extend(submission_problems([puzzle], [split_pipe(record["answer"])]))
    missing = [p.datapoint_id for p in puzzles if p.datapoint_id not in seen]
    if missing:
        problems.append(f"{len(missing)} input rows have no submission row, first: {missing[:3]}")
    return problems
