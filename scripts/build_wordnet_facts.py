"""Build src/pictorank/lexicon/wordnet/facts.tsv.gz: for each word of the default lexicon, what
WordNet says it is: how many senses it has in each part of speech, and the words of the
hypernyms of its first sense (what kind of thing it is: zebra -> equine, odd-toed ungulate, ...,
animal). Open play's ranker reads them (pictorank.features.wordnet).

Run once, by hand (not needed to use or test pictorank; the table is vendored):

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb wn
    python scripts/build_wordnet_facts.py wn/usr/share/wordnet

The first sense is the one the glosses table reads (scripts/build_glossary.py): nouns first, then
verbs, adjectives, adverbs, each in the index file's order (by frequency). Its hypernyms are
followed up to `--depth` steps (instance hypernyms too: a lexicon word may name one), and the
most general synsets (entity, physical entity, abstraction, object, whole) are left out: every
noun has them. Columns: lemma, noun/verb/adjective/adverb sense counts, hypernym words
(space-separated lemma words, each once, in the order met).
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path
from typing import NamedTuple

LEXICON = Path(__file__).resolve().parents[1] / "src" / "pictorank" / "lexicon" / "wordnet" / "lemmas.tsv.gz"
OUT = LEXICON.parent / "facts.tsv.gz"
PARTS = ("noun", "verb", "adj", "adv")
TOO_GENERAL = {"entity", "physical_entity", "abstraction", "abstract_entity", "object", "physical_object",
               "whole", "unit"}


class Synset(NamedTuple):
    """One synset of a data file: its lemma words, the offsets of the synsets above and below it
    (instances included), and its gloss's definition (without the examples)."""

    words: list[str]
    hypernyms: list[str]
    hyponyms: list[str]
    gloss: str


def read_synsets(wordnet_dir: Path, part: str) -> dict[str, Synset]:
    """offset -> its Synset, for one part of speech's data file."""
    synsets: dict[str, Synset] = {}
    for line in (wordnet_dir / f"data.{part}").read_text(encoding="utf-8").splitlines():
        if line.startswith(" "):  # the licence header
            continue
        head, _, gloss = line.partition(" | ")
        fields = head.split(" ")
        count = int(fields[3], 16)
        words = [w.split("(")[0].lower() for w in fields[4 : 4 + 2 * count : 2]]
        rest = fields[4 + 2 * count :]
        pointers = [(rest[1 + 4 * i], rest[2 + 4 * i]) for i in range(int(rest[0]))]
        synsets[fields[0]] = Synset(words, [o for kind, o in pointers if kind in ("@", "@i")],
                                    [o for kind, o in pointers if kind in ("~", "~i")], gloss.split(";")[0].strip())
    return synsets


def read_index(wordnet_dir: Path, part: str) -> dict[str, list[str]]:
    """lemma (lower case, underscores) -> its synsets' offsets in sense order."""
    index: dict[str, list[str]] = {}
    for line in (wordnet_dir / f"index.{part}").read_text(encoding="utf-8").splitlines():
        if line.startswith(" "):
            continue
        fields = line.split()
        senses = int(fields[2])
        index[fields[0]] = fields[len(fields) - senses :]
    return index


def hypernym_words(offset: str, synsets: dict[str, Synset], depth: int) -> list[str]:
    """The lemma words of the synsets above `offset`, nearest first, up to `depth` steps."""
    words: list[str] = []
    level, seen = [offset], {offset}
    for _ in range(depth):
        level = [h for o in level for h in synsets[o].hypernyms if h not in seen]
        seen.update(level)
        for o in level:
            lemmas = synsets[o].words
            if TOO_GENERAL & set(lemmas):
                continue
            words += [w for w in dict.fromkeys(w for lemma in lemmas for w in lemma.split("_")) if w not in words]
    return words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wordnet_dir", type=Path, help="folder of WordNet 3.0's data.* and index.* files")
    parser.add_argument("--depth", type=int, default=12, help="hypernym steps followed from the first sense")
    args = parser.parse_args()
    synsets = {part: read_synsets(args.wordnet_dir, part) for part in PARTS}
    indexes = {part: read_index(args.wordnet_dir, part) for part in PARTS}
    lemmas = [line.split("\t")[0] for line in gzip.decompress(LEXICON.read_bytes()).decode("utf-8").splitlines()]
    rows = []
    for lemma in lemmas:
        key = lemma.replace(" ", "_")
        counts = [len(indexes[part].get(key, ())) for part in PARTS]
        first = next(((part, indexes[part][key][0]) for part in PARTS if key in indexes[part]), None)
        above = hypernym_words(first[1], synsets[first[0]], args.depth) if first else []
        rows.append(f"{lemma}\t" + "\t".join(map(str, counts)) + "\t" + " ".join(above) + "\n")
    with open(OUT, "wb") as file, gzip.GzipFile(fileobj=file, mode="wb", compresslevel=9, mtime=0) as out:
        out.write("".join(rows).encode("utf-8"))  # mtime 0: the same data gives the same bytes
    print(f"{len(rows)} lemmas -> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
