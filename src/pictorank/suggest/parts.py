"""Which pictograms name a *part* of the secret word: its head, a modifier, or its parenthesis.

Bliss builds many words from their parts (`sunflower` = flower + sun, `gas cylinder` = cylinder +
gas, `Thai (language)` = language + country), and the head of an English compound is often the
main idea. Matching is on words up to inflection (see :mod:`pictorank.suggest.rules`), and a
one-word compound is split where a synonym of at least 3 letters starts or ends it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from pictorank.suggest.rules import lemmas, synonyms, words_of

MIN_PART_LETTERS = 3  # `sun` in `sunflower`; shorter pieces match by chance (`in`, `at`)
_INSIDE_PARENTHESES = re.compile(r"\(([^)]*)\)")


@dataclass
class PartMatches:
    """For each description (by index): 1.0 where one of its synonyms is that part of the word."""

    head: np.ndarray
    modifier: np.ndarray
    parenthesis: np.ndarray
    text: dict[int, str] = field(default_factory=dict)  # the part of the word each match named


class PartIndex:
    """Synonyms of every description, indexed by the base forms of their first word."""

    def __init__(self, descriptions: Sequence[str]) -> None:
        self.size = len(descriptions)
        self._by_first: dict[str, list[tuple[int, tuple[str, ...]]]] = defaultdict(list)
        self._single: list[tuple[int, str]] = []  # one-word synonyms, for compounds like `sunflower`
        for index, description in enumerate(descriptions):
            for synonym in synonyms(description):
                words = tuple(words_of(synonym))
                if not words:
                    continue
                for lemma in lemmas(words[0]):
                    self._by_first[lemma].append((index, words))
                if len(words) == 1 and len(words[0]) >= MIN_PART_LETTERS:
                    self._single.append((index, words[0]))

    def match(self, word: str) -> PartMatches:
        """Which descriptions name the word's head, a modifier, or a word in its parenthesis.

        A synonym that is the whole word is no part of it (the game rule bans it instead).
        """
        found = PartMatches(np.zeros(self.size), np.zeros(self.size), np.zeros(self.size))
        words = words_of(word)
        for start in range(len(words)):
            for index, synonym in self._candidates(words[start]):
                end = start + len(synonym)
                if end > len(words) or len(synonym) == len(words) or not _same(words[start:end], synonym):
                    continue
                (found.head if end == len(words) else found.modifier)[index] = 1.0
                found.text.setdefault(index, " ".join(words[start:end]))
        if len(words) == 1:
            self._match_compound(words[0], found)
        for inside in _INSIDE_PARENTHESES.findall(word.lower()):
            for part in re.findall(r"[^\W_]+", inside):
                for index, synonym in self._candidates(part):
                    if len(synonym) == 1:
                        found.parenthesis[index] = 1.0
                        found.text.setdefault(index, part)
        return found

    def _candidates(self, word: str) -> list[tuple[int, tuple[str, ...]]]:
        return [hit for lemma in lemmas(word) for hit in self._by_first.get(lemma, ())]

    def _match_compound(self, glued: str, found: PartMatches) -> None:
        """`sunflower`: `flower` ends it (head), `sun` starts it (modifier)."""
        for index, synonym in self._single:
            if len(glued) < len(synonym) + 2:
                continue
            if glued.endswith(synonym):
                found.head[index] = 1.0
                found.text.setdefault(index, synonym)
            elif glued.startswith(synonym):
                found.modifier[index] = 1.0
                found.text.setdefault(index, synonym)


def _same(words: Sequence[str], synonym: Sequence[str]) -> bool:
    return all(lemmas(a) & lemmas(b) for a, b in zip(words, synonym))
