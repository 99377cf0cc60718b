"""Family-safe rounds: which game puzzles touch a sensitive topic (sex, excretion, obscenities,
slurs), so that the game's random rounds can skip them. The API ranks whatever it is sent; only
the game's draws are filtered.

The words come from `sensitive_words.tsv`, built from WordNet 3.0's topics, usage domains and
definitions by scripts/build_sensitive_words.py (the rule is in its docstring), not from a hand
list. A puzzle is sensitive when its answer, one of its options or one of its pictograms'
descriptions (any of the comma-separated synonyms) is such a word.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

from pictorank.puzzles import Puzzle

TABLE = Path(__file__).resolve().parent / "sensitive_words.tsv"


@lru_cache(maxsize=1)
def sensitive_words() -> dict[str, str]:
    """word (lower case) -> its sensitive topic, read once from the vendored table."""
    table: dict[str, str] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, topic = line.split("\t")
            table[word] = topic
    return table


def sensitive_topic(text: str) -> str | None:
    """The sensitive topic of a word or phrase ('Fart' -> 'excretion'), a plural tried as its
    singular; None when it has none."""
    words = sensitive_words()
    key = " ".join(text.lower().split())
    for form in (key, key[:-1] if key.endswith("s") else key, key[:-2] if key.endswith("es") else key):
        if form in words:
            return words[form]
    return None


def puzzle_topics(puzzle: Puzzle, descriptions: Mapping[int, str]) -> set[str]:
    """The sensitive topics a puzzle touches through its answer, options or pictograms."""
    texts: list[str] = [puzzle.answer or "", *puzzle.options]
    texts += [synonym for hint in puzzle.hints for synonym in descriptions.get(hint, "").split(",")]
    return {topic for topic in map(sensitive_topic, _nonblank(texts)) if topic is not None}


def _nonblank(texts: Iterable[str]) -> list[str]:
    return [t for t in (text.strip() for text in texts) if t]
