"""pictorank: ranks candidate words for an ordered pictogram clue."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pictorank")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
