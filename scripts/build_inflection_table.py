"""Build src/pictorank/lexicon/wordnet/inflections.tsv.gz: English's irregular inflections, so the
echo rule (pictorank.lexicon.echo) knows that "freeze" restates a hint "frozen" and "fall" a "fell".

Run once, by hand (not needed to use or test pictorank; the table is vendored):

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb wn
    python scripts/build_inflection_table.py wn/usr/share/wordnet [--derivations FILE]

The rows are WordNet 3.0's morphological exception lists (noun.exc, verb.exc, adj.exc, adv.exc:
the forms its own lemmatiser cannot reach by removing endings), one inflected form and its base
forms a line, tab-separated, lower case, multi-word forms with spaces. `--derivations FILE`
also writes, in the same format, each lemma's derivationally related lemmas (WordNet's `+`
pointers: cold - coldness, farm - farmer): bench/open_vocab_retrieval.py (retired; docs/experiments/open-vocabulary.md) measured an echo rule
with them.
"""

from __future__ import annotations

import argparse
import gzip
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "pictorank" / "lexicon" / "wordnet" / "inflections.tsv.gz"
PARTS = ("noun", "verb", "adj", "adv")


def clean(lemma: str) -> str:
    """WordNet's spelling of a lemma (underscores, adjective markers) as a player writes it."""
    return lemma.split("(")[0].replace("_", " ").lower()


def read_exceptions(wordnet_dir: Path) -> dict[str, set[str]]:
    """Inflected form -> its base forms, from every part of speech's exception list."""
    bases: dict[str, set[str]] = defaultdict(set)
    for part in PARTS:
        for line in (wordnet_dir / f"{part}.exc").read_text(encoding="utf-8").splitlines():
            form, *lemmas = line.split()
            bases[clean(form)].update(clean(lemma) for lemma in lemmas if clean(lemma) != clean(form))
    return {form: lemmas for form, lemmas in bases.items() if lemmas}


def read_derivations(wordnet_dir: Path) -> dict[str, set[str]]:
    """Lemma -> the lemmas WordNet links to it as derivationally related forms (both directions)."""
    synsets: dict[tuple[str, str], list[str]] = {}
    pointers: list[tuple[list[str], list[str]]] = []
    for part in PARTS:
        for line in (wordnet_dir / f"data.{part}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):  # the licence header
                continue
            fields = line.split(" | ")[0].split(" ")
            count = int(fields[3], 16)
            words = [clean(w) for w in fields[4 : 4 + 2 * count : 2]]
            kind = "a" if fields[2] in "as" else fields[2]
            synsets[(fields[0], kind)] = words
            at = 4 + 2 * count
            pointers.append((words, fields[at + 1 : at + 1 + 4 * int(fields[at])]))
    related: dict[str, set[str]] = defaultdict(set)
    for words, fields in pointers:
        for symbol, offset, kind, ends in zip(fields[::4], fields[1::4], fields[2::4], fields[3::4]):
            source, target = int(ends[:2], 16), int(ends[2:], 16)
            if symbol != "+" or not source or not target:
                continue
            a, b = words[source - 1], synsets[(offset, "a" if kind in "as" else kind)][target - 1]
            if a != b:
                related[a].add(b)
                related[b].add(a)
    return related


def write(path: Path, table: dict[str, set[str]]) -> None:
    """One row a word, sorted; mtime 0, so the same data gives the same bytes."""
    text = "".join(f"{word}\t{chr(9).join(sorted(table[word]))}\n" for word in sorted(table))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file, gzip.GzipFile(fileobj=file, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(text.encode("utf-8"))
    print(f"{len(table)} rows -> {path} ({path.stat().st_size:,} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wordnet_dir", type=Path, help="folder of WordNet 3.0's *.exc and data.* files")
    parser.add_argument("--derivations", type=Path, default=None, help="also write derivational links here")
    args = parser.parse_args()
    write(OUT, read_exceptions(args.wordnet_dir))
    if args.derivations is not None:
        write(args.derivations, read_derivations(args.wordnet_dir))


if __name__ == "__main__":
    main()
