"""Build src/pictorank/lexicon/wordnet/glosses.tsv.gz: each WordNet 3.0 lemma and the gloss of its
first sense, the table open play and the clue model read a word's definition from (see pictorank.suggest.glossary).

Run once, by hand, where NLTK's WordNet 3.0 reader and data are available (not needed to use or
test pictorank; the table is vendored):

    pip install nltk==3.10.4
    NLTK_DATA=/path/to/nltk_data python scripts/build_glossary.py

The data: Princeton WordNet 3.0 (e.g. Debian's `wordnet-base` 3.0 files under
nltk_data/corpora/wordnet); its licence is vendored beside the table as LICENSE.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from nltk.corpus import wordnet

OUT = Path(__file__).resolve().parents[1] / "src" / "pictorank" / "lexicon" / "wordnet" / "glosses.tsv.gz"


def first_glosses() -> dict[str, str]:
    """lemma (lower case, spaces) -> the gloss of its first sense, in WordNet's order (nouns, then
    verbs, adjectives, adverbs; within a part of speech by frequency): its most common meaning."""
    table: dict[str, str] = {}
    for name in sorted(set(wordnet.all_lemma_names())):
        senses = wordnet.synsets(name)
        if senses:
            table[name.replace("_", " ").lower()] = " ".join(senses[0].definition().split())
    return table


def main() -> None:
    assert wordnet.get_version() == "3.0", wordnet.get_version()
    table = first_glosses()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{lemma}\t{table[lemma]}\n" for lemma in sorted(table))
    with open(OUT, "wb") as file, gzip.GzipFile(fileobj=file, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(text.encode("utf-8"))  # mtime 0: the same data gives the same bytes
    print(f"{len(table)} lemmas -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
