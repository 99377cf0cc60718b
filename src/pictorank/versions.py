"""Library versions and file digests recorded beside every saved model, and the checks made when loading one.

A model directory made with another major/minor release of a library whose file formats or
numerics matter may load without error and still rank differently, so loading refuses it.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

FORMAT_VERSION = 2  # bump when the layout of a model directory changes
CHECKED = ("pictorank", "sentence-transformers", "lightgbm", "numpy")


def _installed(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def library_versions() -> dict[str, str | int | None]:
    """Versions to store in a model's config."""
    found: dict[str, str | int | None] = {name: _installed(name) for name in CHECKED}
    found["format"] = FORMAT_VERSION
    found["torch"] = _installed("torch")
    return found


def _major_minor(text: str) -> tuple[str, ...]:
    return tuple(text.split(".")[:2])


def check_versions(stored: dict, where: str | Path) -> None:
    """Raise ModelError when `stored` versions are incompatible with the installed ones."""
    from pictorank.ranker import ModelError

    if not isinstance(stored, dict):
        raise ModelError(f"{where}: versions must be a JSON object, found {type(stored).__name__}")
    if stored.get("format") != FORMAT_VERSION:
        raise ModelError(
            f"{where}: model format {stored.get('format')!r}, this pictorank reads format "
            f"{FORMAT_VERSION}; retrain the model with `pictorank train`"
        )
    for package in CHECKED:
        made_with, installed = stored.get(package), _installed(package)
        if made_with and installed and _major_minor(made_with) != _major_minor(installed):
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
