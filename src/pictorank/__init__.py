"""pictorank: ranks candidate words for an ordered pictogram clue."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """`pictorank.__version__`, read only when asked: importlib.metadata takes longer to import
    than the rest of the entry point, and the command installs its signal handlers only after
    this package is imported (see pictorank.__main__)."""
    if name != "__version__":
        raise AttributeError(f"module 'pictorank' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pictorank")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"
