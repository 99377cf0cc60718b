"""Dictionary definitions of the lexicon's words: WordNet 3.0's gloss of each lemma's first (most
common) sense, vendored as `wordnet/glosses.tsv.gz` (one row per lemma, `lemma<TAB>gloss`;
licence in `wordnet/LICENSE`; built by `scripts/build_glossary.py`).

Open play reads a word through its gloss as well as its name (pictorank.features.gloss), and the
clue-giver reads it the same way (pictorank.suggest.glossary): a clue is a definition in
pictures, and a gloss is the same definition in words.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

GLOSSES = Path(__file__).resolve().parent / "wordnet" / "glosses.tsv.gz"


@lru_cache(maxsize=4)
def read_glosses(path: str | Path = GLOSSES) -> Mapping[str, str]:
    """Lemma -> gloss, the first row of a lemma kept. Read once per process and shared, read-only:
    the clue-giver, open play's WordNet columns and the lexicon's store all read the same table."""
    table: dict[str, str] = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            lemma, _, gloss = line.rstrip("\n").partition("\t")
            if gloss:
                table.setdefault(lemma, gloss)
    return MappingProxyType(table)


def gloss_of(word: str, table: Mapping[str, str]) -> str | None:
    """The gloss of `word` as the lexicon spells it, else of its lower-case form; None when
    WordNet has neither."""
    return table.get(word) or table.get(word.casefold())
