"""The game page's puzzles: a CSV with answers (`PICTORANK_GAME_PUZZLES`, by default the bundled
val.csv), loaded once when the app is created. No HTTP here; the page and its endpoints are in
`pictorank.api.routes.game`.

The Clue mode's rounds (pictorank picks a secret word among a puzzle's options and gives the clue)
keep the secret on the server without keeping any state: a round's id is the puzzle's id and a
random nonce, and the secret is the option that an HMAC of the two under the service's key picks.
Once clued, the id also carries the shown pictograms' ids, so that the guess explains exactly the
clue that was shown, whichever worker answers it, and an HMAC of them under the same key, so that
no one else can make the service explain a clue it never gave (a forged id is a 404).
Only a holder of the key can tell which option that is, any worker with the same key checks a
guess (`PICTORANK_GAME_KEY`, which `pictorank serve` shares with its workers), and rounds cost no
memory however many are played.

If the puzzles cannot be loaded the rest of the service still works and the game endpoints
answer 503 with the reason, so a deployment serving another vocabulary does not fail because
of the demo data.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import random
import re
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path

from pictorank.api.family import puzzle_topics
from pictorank.errors import DataError
from pictorank.puzzles import Puzzle, load_hints, load_puzzles

log = logging.getLogger(__name__)
ROUND_SEPARATOR = "."  # a round id is the puzzle's id, this, and the nonce (hex: never holds it)
NONCE_BYTES = 16
# Then, once the round is clued, this and the shown pictograms' ids joined by "-": the guess explains
# exactly the clue that was shown (another worker might choose another one for the same word); then
# this again and the clue's tag, which vouches that the service showed it.
CLUE_SEPARATOR = "~"
_CLUE = re.compile(r"[0-9]{1,18}(-[0-9]{1,18}){0,5}")
TAG_CHARACTERS = 32  # hex digits of the HMAC kept


@dataclass
class GamePuzzles:
    """The puzzles the game draws from, with their hint descriptions; `error` when unavailable."""

    puzzles: dict[str, Puzzle] = field(default_factory=dict)
    descriptions: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    rng: random.Random = field(default_factory=random.Random)
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)  # picks rounds' secrets
    skipped: frozenset[str] = frozenset()  # ids of the puzzles random rounds leave out (family-safe)

    @classmethod
    def load(cls, puzzles_file: Path, hints_file: Path, key: bytes | None = None,
             family_safe: bool = True) -> "GamePuzzles":
        """Every puzzle of `puzzles_file`, checked against the served vocabulary; never raises.
        `key`: what picks the Clue mode's secret words (a random one when None). `family_safe`:
        random rounds skip the puzzles that touch a sensitive topic (pictorank.api.family); a
        round already dealt, or a puzzle asked for by id, is still answered."""
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
        game = cls({p.datapoint_id: p for p in puzzles if _addressable(p, puzzles_file)}, vocab.descriptions)
        if key is not None:
            game.key = key
        if family_safe:
            game.skipped = frozenset(i for i, p in game.puzzles.items() if puzzle_topics(p, game.descriptions))
            log.info("family-safe game: %d of %d puzzles left out of random rounds", len(game.skipped), len(game.puzzles))
        return game

    def draw(self, subtask: int | None = None) -> Puzzle | None:
        """A random puzzle (of `subtask`, if given); None when there is none."""
        ids = [i for i, p in self.puzzles.items()
               if (subtask is None or p.subtask_id == subtask) and i not in self.skipped]
        return self.puzzles[self.rng.choice(ids)] if ids else None

    def new_round(self, puzzle: Puzzle) -> "ClueRound":
        """A Clue-mode round over `puzzle`'s options, its secret word picked by a fresh nonce."""
        return self._round(puzzle, secrets.token_hex(NONCE_BYTES))

    def clued(self, round_: "ClueRound", hint_ids: tuple[int, ...]) -> "ClueRound":
        """The round (as `new_round` made it) once `hint_ids` were shown: its id carries them and
        their tag."""
        clue = "-".join(map(str, hint_ids))
        tag = self._tag(round_.id, clue)
        return replace(round_, id=f"{round_.id}{CLUE_SEPARATOR}{clue}{CLUE_SEPARATOR}{tag}", clue=tuple(hint_ids))

    def round(self, round_id: str) -> "ClueRound | None":
        """The round `round_id` names, with the clue it showed when the id carries one; None if it
        names none (unknown puzzle, malformed nonce or clue, a clue whose tag is not the service's)."""
        rest, separator, tag = round_id.rpartition(CLUE_SEPARATOR)
        base, separator_2, clue = rest.rpartition(CLUE_SEPARATOR)
        if not (separator and separator_2 and len(tag) == TAG_CHARACTERS and _is_hex(tag)):
            return self._parse(round_id)  # not clued (a puzzle id may hold the separator itself)
        found = self._parse(base)
        if found is None or not _CLUE.fullmatch(clue) or not hmac.compare_digest(tag, self._tag(base, clue)):
            return None
        return replace(found, id=round_id, clue=tuple(int(h) for h in clue.split("-")))

    def _tag(self, base: str, clue: str) -> str:
        message = f"clue\n{base}\n{clue}".encode("utf-8")
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()[:TAG_CHARACTERS]

    def _parse(self, round_id: str) -> "ClueRound | None":
        puzzle_id, separator, nonce = round_id.rpartition(ROUND_SEPARATOR)
        puzzle = self.puzzles.get(puzzle_id)
        if not separator or puzzle is None or len(nonce) != 2 * NONCE_BYTES or not _is_hex(nonce):
            return None
        return self._round(puzzle, nonce)

    def _round(self, puzzle: Puzzle, nonce: str) -> "ClueRound":
        digest = hmac.new(self.key, f"{puzzle.datapoint_id}\n{nonce}".encode("utf-8"), hashlib.sha256).digest()
        word = puzzle.options[int.from_bytes(digest[:8], "big") % len(puzzle.options)]
        return ClueRound(f"{puzzle.datapoint_id}{ROUND_SEPARATOR}{nonce}", puzzle, word,
                         tuple(o for o in puzzle.options if o != word))


@dataclass(frozen=True)
class ClueRound:
    """One Clue-mode round: the secret `word` among `puzzle`'s options, the others to tell it from."""

    id: str
    puzzle: Puzzle
    word: str
    avoid: tuple[str, ...]
    clue: tuple[int, ...] = ()  # the pictograms shown, once clued (GamePuzzles.clued)


def _addressable(puzzle: Puzzle, puzzles_file: Path) -> bool:
    """Whether a puzzle's id can be a URL's path segment: `.` and `..` cannot (browsers resolve
    them away, even written %2E), so such a puzzle is left out of the game, with a warning."""
    if puzzle.datapoint_id not in (".", ".."):
        return True
    log.warning("game puzzle %r of %s left out: a datapointID of . or .. cannot be part of a URL",
                puzzle.datapoint_id, puzzles_file)
    return False


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)
