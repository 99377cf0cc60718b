"""Every exception pictorank raises on purpose, in one place at the bottom of the package.

Each says what went wrong and what to do about it; the CLI turns any :class:`PictorankError` into
one line on stderr and exit code 2, the HTTP service into a 4xx with a JSON body.
"""

from __future__ import annotations

import os


class PictorankError(Exception):
    """Base of every error a user can cause (bad file, bad model, bad setting, bad usage)."""


class DataError(PictorankError, ValueError):
    """An input file breaks the data contract; the message names file, row and column."""

    def __init__(self, file: str | os.PathLike, row: str | None, column: str | None, problem: str) -> None:
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


class ModelError(PictorankError, ValueError):
    """A model directory is missing, corrupt or made by incompatible versions."""


class SettingsError(PictorankError, ValueError):
    """A setting (a `PICTORANK_*` variable or the option that sets it) has a bad value."""

    def __init__(self, variable: str, problem: str) -> None:
        self.variable = variable
        self.problem = problem
        super().__init__(f"setting {variable}: {problem}")


class UsageError(PictorankError, ValueError):
    """The command was asked for something it cannot do as given (e.g. nothing to compare)."""


class NotFittedError(PictorankError, RuntimeError):
    """A learned component was used before it was fitted or loaded (a programming error)."""
