"""The game's rule that the answer is not a pictogram's own word: a guess that merely restates a
hint ("cold" for cold + white + falling, "fall" for its "falling") is never offered back.

A guess echoes the hints when each of its words is a hint word or an inflection of one (the same
crude stem: plural, -ing, -ed, a doubled final consonant). A compound or phrase that adds a word
("snowfall", "rain water" for sky + water + falling) is a real guess and stays.
"""

from __future__ import annotations

import re
from typing import Iterable

from pictorank.lexicon.words import without_qualifier

_WORD = re.compile(r"[a-z0-9']+")
_SUFFIXES = ("ing", "ied", "ies", "ed", "es", "s")


def stem(word: str) -> str:
    """A crude English stem that is enough to tell an inflection of a hint word: falling -> fall,
    stripes -> stripe, running -> run, flies -> fly."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (2 if suffix in ("ies", "ied") else 3):
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            if suffix in ("ing", "ed") and len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "ls":
                word = word[:-1]  # running -> run; but falling stays fall, and dressed dress
            break
    return word.rstrip("e") or word


def words_of(text: str) -> list[str]:
    return _WORD.findall(without_qualifier(text).casefold())


def hint_stems(hints: Iterable[str]) -> frozenset[str]:
    """The stems of every word of the hint descriptions."""
    return frozenset(stem(w) for hint in hints for w in words_of(hint))


def echoes(guess: str, stems: frozenset[str]) -> bool:
    """Whether every word of `guess` is one of the hints' words (by stem)."""
    words = words_of(guess)
    return bool(words) and all(stem(w) in stems for w in words)
