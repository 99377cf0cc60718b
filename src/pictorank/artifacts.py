"""What pictorank writes to disk and reads back: library versions, file digests, JSON files, and
the one way a folder (a model or a report) is replaced.

A model directory made with another major/minor release of a library whose file formats or
numerics matter may load without error and still rank differently, so loading refuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Iterator, Sequence

from pictorank.errors import DataError, ModelError

FORMAT_VERSION = 4  # bump when the layout of a model directory changes
MARKER_FILE = ".pictorank"  # in every folder pictorank writes whole (models, reports)
_KIND = "kind: "  # the marker's line that names what the folder is ("kind: model")
CHECKED = ("pictorank", "sentence-transformers", "lightgbm", "numpy")


def _installed(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


# Installed only with the `train` extra: a serving install cannot know which made a shipped fit.
TRAINING_ONLY = ("torch", "sentence-transformers")


def fit_versions(made_with: Any = None) -> dict[str, str | int | None]:
    """library_versions() as a fit's digest names them. A serving install has no training stack
    and cannot fit again, so for a fit it reads back it takes the training-only versions that the
    fit recorded (`made_with`); every other version must still match."""
    found = library_versions()
    if isinstance(made_with, dict):
        for name in TRAINING_ONLY:
            if found.get(name) is None:
                found[name] = made_with.get(name)
    return found


def library_versions() -> dict[str, str | int | None]:
    """Versions to store in a model's config."""
    found: dict[str, str | int | None] = {name: _installed(name) for name in CHECKED}
    found["format"] = FORMAT_VERSION
    found["torch"] = _installed("torch")
    return found


def _major_minor(text: str) -> tuple[str, ...]:
    return tuple(text.split(".")[:2])


def check_versions(stored: Any, where: str | Path) -> None:
    """Raise ModelError when `stored` versions are incompatible with the installed ones."""
    if not isinstance(stored, dict):
        raise ModelError(f"{where}: versions must be a JSON object, found {type(stored).__name__}")
    if stored.get("format") != FORMAT_VERSION:
        raise ModelError(
            f"{where}: model format {stored.get('format')!r}, this pictorank reads format "
            f"{FORMAT_VERSION}; retrain the model with `pictorank train`"
        )
    for package in CHECKED:
        made_with, installed = stored.get(package), _installed(package)
        if made_with and installed and _major_minor(str(made_with)) != _major_minor(installed):
            raise ModelError(
                f"{where}: made with {package} {made_with}, installed is {installed}; "
                f"install {package}=={made_with} or retrain the model"
            )


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file, read in 1 MiB chunks (training files and model weights can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def hash_files(directory: Path, skip: str) -> dict[str, str]:
    """sha256 of every file under `directory` (relative path -> digest), except the file `skip`."""
    return {
        p.relative_to(directory).as_posix(): sha256_file(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != skip
    }


def check_files(directory: Path, hashes: Any, where: Path, unread: Sequence[str] = ()) -> None:
    """Every file a model config lists must be there, inside `directory`, with the same sha256;
    except that the files under the folders `unread` (which this load does not read) may be
    left out. A file that is there is checked all the same."""
    if not isinstance(hashes, dict) or not hashes:
        raise ModelError(f"{where}: no file hashes; not a model directory written by `pictorank train`")
    for name, digest in hashes.items():
        path = inside(directory, name, where)
        if not path.is_file():
            if any(name.startswith(f"{folder}/") for folder in unread) and not path.exists():
                continue
            raise ModelError(f"{path}: missing from the model directory; retrain or restore it")
        if sha256_file(path) != digest:
            raise ModelError(f"{path}: corrupt (sha256 differs from the one recorded at training)")


def inside(directory: Path, name: Any, where: Path) -> Path:
    """`directory / name`, refusing a name that is not a plain relative path inside `directory`."""
    if not isinstance(name, str) or not name:
        raise ModelError(f"{where}: file name must be a non-empty string, found {name!r}")
    path = (directory / name).resolve()
    if not path.is_relative_to(directory.resolve()):
        raise ModelError(f"{where}: {name!r} points outside the model directory")
    return directory / name


def read_json(path: Path) -> Any:
    """A model directory's JSON file; a missing or unreadable one is a ModelError naming it. Only a
    regular file is read: a FIFO or a device in its place would hang the reader."""
    if path.exists() and not path.is_file():
        raise ModelError(f"{path}: not a regular file")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:  # nested too deep
        raise ModelError(f"{path}: missing or corrupt ({exc})") from None


def write_json(path: Path, value: Any, indent: int | None = 2) -> None:
    path.write_text(json.dumps(value, indent=indent, default=str), encoding="utf-8")


def check_replaceable(target: str | os.PathLike, force: bool = False, kind: str | None = None,
                      inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Refuse a destination folder whose contents pictorank would destroy without being asked.

    A folder is replaced whole, so it must be new, empty, or one pictorank wrote itself (it holds
    MARKER_FILE) as the same `kind` of folder ("model", "report"); anything else needs `force`
    (the CLI's --force). Never, not even with `force`, a folder that is, holds or lies inside one
    of the command's `inputs`: pictorank never writes over what it reads (`evaluate --model DIR
    --report DIR` would otherwise replace the model it is evaluating). Called before the work that
    fills the folder, so a refusal costs nothing.
    """
    target = Path(target)
    _check_not_an_input(target, inputs, "destination")
    blocking = next((p for p in (target, *target.parents) if p.exists() and not p.is_dir()), None)
    if blocking == target:
        raise DataError(target, None, None, "exists and is not a folder; choose another destination")
    if blocking is not None:
        raise DataError(target, None, None, f"cannot create the folder: {blocking} is a file")
    if force or not target.exists() or not any(target.iterdir()):
        return
    if (target / MARKER_FILE).is_file():
        written = marker_kind(target)
        if kind is None or written == kind:
            return
        raise DataError(target, None, None, f"holds a pictorank {written}, which writing a {kind} here would "
                                            "replace; choose another destination or pass --force")
    raise DataError(target, None, None,
                    "folder is not empty and was not written by pictorank; choose another destination "
                    "or pass --force to replace it and everything in it")


def marker_kind(folder: Path) -> str:
    """What pictorank wrote `folder` as: "model" or "report". Markers written before they named
    their kind are told apart by the report's page (pictorank wrote no other kind of folder)."""
    try:
        lines = (folder / MARKER_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    named = next((line.removeprefix(_KIND).strip() for line in lines if line.startswith(_KIND)), None)
    return named or ("report" if (folder / "report.html").is_file() else "model")


def _check_not_an_input(target: Path, inputs: Sequence[str | os.PathLike], what: str) -> None:
    """A DataError when `target` is one of `inputs`, lies inside one, or holds one."""
    try:
        resolved = target.resolve()
        for source in inputs:
            read = Path(source).resolve()
            if resolved == read or read in resolved.parents or resolved in read.parents:
                raise DataError(target, None, None, f"overlaps {source}, which this command reads; choose another {what}")
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
        raise DataError(target, None, None, f"cannot be used as a {what}: {exc}") from None


@contextmanager
def replacing_dir(target: str | os.PathLike, force: bool = False, kind: str | None = None) -> Iterator[Path]:
    """Build a folder in a temporary sibling of `target`, then swap it in; on any failure the old
    `target` (if any) is left exactly as it was and the temporary folder is removed.

        with replacing_dir("models/default") as staging:
            write_everything_into(staging)

    The new folder holds MARKER_FILE, naming its `kind`, so the next run that writes the same kind
    may replace it; a folder without one, or of another kind, is refused unless `force` (see
    `check_replaceable`). A `target` that is a symlink is written through: the folder it points
    to is replaced and the link kept (see `_through_link`).
    """
    target = _through_link(Path(target))
    check_replaceable(target, force, kind)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; models and reports are meant to be shared
    try:
        (staging / MARKER_FILE).write_text(
            "Written by pictorank, which replaces this folder whole when it writes here again.\n"
            + (f"{_KIND}{kind}\n" if kind else ""), encoding="utf-8"
        )
        yield staging
        _swap_in(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _through_link(target: Path) -> Path:
    """Where a folder named `target` really is: the link's target when `target` is a symlink.
    Swapping at the link itself would replace the link with a real folder and leave the old link
    behind (a rename moves the link, and removing a tree refuses a link), while the folder the
    user pointed at kept the old contents."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _swap_in(new: Path, target: Path) -> None:
    """Put the finished folder `new` at `target`, restoring the old one if the last rename fails."""
    if not target.exists():
        os.replace(new, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    old.rmdir()
    os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
