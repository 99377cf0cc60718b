"""What WordNet says a lexicon word is: how many senses it has in each part of speech, the words
of its first sense's hypernyms (zebra: equine, ungulate, mammal, ..., animal) and of its gloss,
vendored as `wordnet/facts.tsv.gz` (built by scripts/build_wordnet_facts.py; licence in
`wordnet/LICENSE`) beside `glosses.tsv.gz`.

A Bliss clue names its answer's kind first (a classifier: animal, person, building) and what
sets it apart after; WordNet files a word under its kinds and defines it in words. Open play's
ranker reads how the hints' words meet those (pictorank.features.wordnet). Words are compared by
the echo rule's crude stem (pictorank.lexicon.echo), so "falling" in a hint meets "falling" and
"fall" in a gloss.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from pictorank.lexicon.echo import stem
from pictorank.lexicon.glosses import read_glosses
from pictorank.lexicon.words import STOPWORDS

FACTS = Path(__file__).resolve().parent / "wordnet" / "facts.tsv.gz"
PARTS = ("noun", "verb", "adj", "adv")
_WORD = re.compile(r"(?:[^\W_]|')+")  # runs of letters, digits and apostrophes
# Besides function words, the words a gloss frames a definition with.
_STOPWORDS = STOPWORDS | frozenset("that which who used especially something someone".split())


@dataclass(frozen=True, slots=True)
class WordFacts:
    """One word's senses per part of speech (PARTS' order), its hypernyms' words and its gloss."""

    senses: tuple[int, int, int, int]
    kinds_text: str
    gloss: str

    @property
    def kinds(self) -> frozenset[str]:
        return stems_of(self.kinds_text)

    @property
    def defined_by(self) -> frozenset[str]:
        return stems_of(self.gloss)


@lru_cache(maxsize=8192)  # bounded: a service meets new candidates for as long as it runs
def stems_of(text: str) -> frozenset[str]:
    """The stems of `text`'s words, less function words and the words WordNet's glosses use to
    frame a definition ("used", "especially")."""
    return frozenset(stem_tokens(text))


def stem_tokens(text: str) -> list[str]:
    """`stems_of` in the text's order, repeats kept (what a term-frequency index counts)."""
    return [_stem(w) for w in _WORD.findall(text.casefold()) if w not in _STOPWORDS and len(w) > 1]


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """`stem`, once per distinct word: the same few thousand words make up most glosses."""
    return stem(word)


def read_facts(path: str | Path = FACTS, glosses: Mapping[str, str] | None = None) -> dict[str, WordFacts]:
    """Lemma -> its WordFacts; `glosses` (lemma -> gloss) gives `defined_by`."""
    table: dict[str, WordFacts] = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            lemma, noun, verb, adj, adv, kinds = line.rstrip("\n").split("\t")
            table[lemma] = WordFacts((int(noun), int(verb), int(adj), int(adv)), kinds, (glosses or {}).get(lemma, ""))
    return table


@lru_cache(maxsize=1)
def default_facts() -> Mapping[str, WordFacts]:
    """The vendored table, glosses included (read once per process)."""
    return read_facts(FACTS, read_glosses())


def facts_of(word: str, table: Mapping[str, WordFacts]) -> WordFacts | None:
    """`word`'s facts as the lexicon spells it, else of its lower-case form; None when WordNet
    has neither."""
    return table.get(word) or table.get(word.casefold())
