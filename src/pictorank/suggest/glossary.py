"""Dictionary definitions of words, for the clue model: WordNet 3.0's gloss of each lemma's first
(most common) sense, the table open play reads too (pictorank.lexicon.glosses).

Why: a Bliss clue is a definition in pictures, genus first and differentiae after it (`Monday` =
day + two), and a dictionary gloss is the same definition in words ("the second day of the week").
The clue model reads a word as the unit mean of the word's embedding and its gloss's, so the
pictograms of its definition come nearer: on Bliss val the clues look more like people's, and
are guessed a little less often (docs/experiments/clue-giver.md, "WordNet glosses"). A word
WordNet does not know (a name, most phrases) is read as before.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path

from pictorank.lexicon.glosses import GLOSSES, read_glosses
from pictorank.suggest.rules import lemmas, words_of


class Glossary:
    """Glosses by word: the table is read on first use (about half a second), once per process."""

    def __init__(self, path: str | Path = GLOSSES) -> None:
        self.path = Path(path)

    def load(self) -> "Glossary":
        """Read the table now: a service reads it at start-up, not in its first request."""
        self._table
        return self

    @cached_property
    def digest(self) -> str:
        """The table's SHA-256: a clue model fitted with other glosses is another fit."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    @cached_property
    def _table(self) -> dict[str, str]:
        table: dict[str, str] = {}
        for lemma, gloss in read_glosses(self.path).items():
            # keyed as words are looked up: `mother-in-law` and `mother in law` are one key
            table.setdefault(" ".join(words_of(lemma)), gloss)
        return table

    def gloss(self, word: str) -> str | None:
        """The gloss of `word` (its parentheses and possessives ignored, as the game rule reads it),
        else of a base form of its last word (`flames` -> `flame`), else None."""
        words = words_of(word)
        if not words:
            return None
        found = self._table.get(" ".join(words))
        if found is not None:
            return found
        for base in sorted(lemmas(words[-1]) - {words[-1]}):
            found = self._table.get(" ".join([*words[:-1], base]))
            if found is not None:
                return found
        return None


GLOSSARY = Glossary()  # the vendored table, shared: it is read once
