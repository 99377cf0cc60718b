"""Family-safe rounds: which game puzzles touch a sensitive topic (sex, excretion, obscenities,
slurs), so that the game's random rounds can skip them. The API ranks whatever it is sent; only
the game's draws are filtered.

Two tables say which words are sensitive:

- `sensitive_words.tsv`, built from WordNet 3.0's topics, usage domains and definitions by
  scripts/build_sensitive_words.py (the rule is in its docstring);
- `reviewed_words.tsv`, a short list reviewed by hand of what WordNet files under medicine or
  biology instead ('constipation', 'birth control', 'venereal').

A text (an answer, an option, or one of the comma-separated synonyms of a pictogram's
description) is sensitive when it, its singular, or its plain form (a qualified data word read
by the words before its qualifier: 'abortion (induced)' is abortion) is in either table, or when
any of its words, the qualifier's included, is in the reviewed list ('venereal papilloma',
'catheter (urine)'). A puzzle is sensitive when any of its texts is.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

from pictorank.lexicon.words import without_qualifier
from pictorank.puzzles import Puzzle

TABLE = Path(__file__).resolve().parent / "sensitive_words.tsv"
REVIEWED = Path(__file__).resolve().parent / "reviewed_words.tsv"
_WORD = re.compile(r"[a-z]+(?:[-'][a-z]+)*")


def _read(path: Path) -> dict[str, str]:
    table: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, topic = line.split("\t")[:2]
            table[word] = topic
    return table


@lru_cache(maxsize=1)
def reviewed_words() -> dict[str, str]:
    """word (lower case) -> its sensitive topic, from the reviewed list (read once)."""
    return _read(REVIEWED)


@lru_cache(maxsize=1)
def sensitive_words() -> dict[str, str]:
    """word (lower case) -> its sensitive topic: the WordNet-built table and the reviewed list."""
    return {**_read(TABLE), **reviewed_words()}


def sensitive_topic(text: str) -> str | None:
    """The sensitive topic of a word or phrase ('Fart' -> 'excretion'; see the module's
    docstring for the rule); None when it has none."""
    words, reviewed = sensitive_words(), reviewed_words()
    key = " ".join(text.lower().split())
    plain = without_qualifier(key)
    for whole in dict.fromkeys((key, plain)):
        for form in _singulars(whole):
            if form in words:
                return words[form]
    for word in _WORD.findall(key):
        for form in _singulars(word):
            if form in reviewed:
                return reviewed[form]
    return None


def _singulars(key: str) -> tuple[str, ...]:
    """`key` and what it would be as a singular ('farts' -> 'fart', 'bushes' -> 'bush')."""
    return (key, key[:-1] if key.endswith("s") else key, key[:-2] if key.endswith("es") else key)


def puzzle_topics(puzzle: Puzzle, descriptions: Mapping[int, str]) -> set[str]:
    """The sensitive topics a puzzle touches through its answer, options or pictograms."""
    texts: list[str] = [puzzle.answer or "", *puzzle.options]
    texts += [synonym for hint in puzzle.hints for synonym in descriptions.get(hint, "").split(",")]
    return {topic for topic in map(sensitive_topic, _nonblank(texts)) if topic is not None}


def _nonblank(texts: Iterable[str]) -> list[str]:
    return [t for t in (text.strip() for text in texts) if t]
