"""What every ranker sees: a clue as hint *texts* (not ids) plus options, and the clue's text forms.

Working on texts means the same code serves any pictogram vocabulary and free-text hints alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Query:
    """Hint descriptions in clue order (main idea first), candidate options, maybe the answer."""

    hints: tuple[str, ...]
    options: tuple[str, ...]
    answer: str | None = None


def joined_text(hints: Sequence[str]) -> str:
    """All hint descriptions in order as one plain string (the best unlearned clue text)."""
    return "; ".join(hints)


def seed_text(hints: Sequence[str]) -> str:
    """The task statement's baseline template: all hints in one tagged sentence, main idea first."""
    lines = ["The following hints at our target word:", f"<HINT_PRIMARY>{hints[0]}</HINT_PRIMARY>"]
    lines += [f"<HINT>{hint}</HINT>" for hint in hints[1:]]
    return "\n".join(lines)
