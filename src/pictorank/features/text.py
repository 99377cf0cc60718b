"""String helpers shared by the feature groups: description tokens, synonyms, compound cover.

A hint description lists synonyms separated by commas ('container, bowl, holder'); the lexical
and association features compare its words, never its id, with the option's.
"""

from __future__ import annotations

import re

import numpy as np

from pictorank.lexicon.words import STOPWORDS


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stopwords."""
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS]


def synonyms(description: str) -> list[str]:
    """A description lists synonyms separated by commas: 'container, bowl, holder'."""
    return [s.strip().lower() for s in re.split(r"[,;]", description) if s.strip()]


def covered_fraction(option: str, hint_tokens: set[str]) -> float:
    """Share of the option's letters spelled out by hint words (sunflower = sun + flower -> 1.0)."""
    letters = option.replace(" ", "")
    if not letters:
        return 0.0
    covered = np.zeros(len(letters), dtype=bool)
    for token in hint_tokens:
        if len(token) < 3:
            continue
        start = letters.find(token)
        while start != -1:
            covered[start : start + len(token)] = True
            start = letters.find(token, start + 1)
    return float(covered.mean())
