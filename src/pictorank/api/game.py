"""The game page's puzzles: a CSV with answers (`PICTORANK_GAME_PUZZLES`, by default the bundled
val.csv), loaded once when the app is created. No HTTP here; the page and its endpoints are in
`pictorank.api.routes.game`.

If the puzzles cannot be loaded the rest of the service still works and the game endpoints
answer 503 with the reason, so a deployment serving another vocabulary does not fail because
of the demo data.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

from pictorank.errors import DataError
from pictorank.puzzles import Puzzle, load_hints, load_puzzles

log = logging.getLogger(__name__)


@dataclass
class GamePuzzles:
    """The puzzles the game draws from, with their hint descriptions; `error` when unavailable."""

    puzzles: dict[str, Puzzle] = field(default_factory=dict)
    descriptions: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def load(cls, puzzles_file: Path, hints_file: Path) -> "GamePuzzles":
        """Every puzzle of `puzzles_file`, checked against the served vocabulary; never raises."""
        try:
            vocab = load_hints(hints_file)
            puzzles = load_puzzles(puzzles_file, vocab)
            if not puzzles:
                raise DataError(puzzles_file, None, None, "no puzzles in file")
            if any(p.answer is None for p in puzzles):
                raise DataError(puzzles_file, None, "answer", "game puzzles need an answer column (use a val/train file)")
        except DataError as exc:
            log.warning("game page disabled: %s", exc)
            return cls(error=f"the game has no puzzles: {exc} (set PICTORANK_GAME_PUZZLES)")
        return cls({p.datapoint_id: p for p in puzzles}, vocab.descriptions)
