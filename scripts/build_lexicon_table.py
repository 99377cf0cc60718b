"""Build src/pictorank/lexicon/wordnet/lemmas.tsv.gz: the English words open-vocabulary mode guesses
from by default (pictorank.lexicon), each with how common it is.

Run once, by hand (not needed to use or test pictorank; the table is vendored):

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb wn
    pip install wordfreq==3.1.1
    python scripts/build_lexicon_table.py wn/usr/share/wordnet [--size 75000]

The words: every lemma of Princeton WordNet 3.0's data files (the same release the clue-giver's
glosses come from), less proper names: a lemma that is always written with a capital and names an
instance (WordNet's `@i` pointer) in most of its senses (Paris, Poland, the Thames) is a name, not
a word a player guesses; Sunday (a day, and an evangelist) and einstein (a genius) stay. Each lemma gets its
Zipf frequency from wordfreq (English, the `best` list; a phrase's from its words); rare
technical senses then fall out by frequency: the table keeps the `--size` most frequent lemmas,
ties broken by WordNet's own sense-tagged counts (cntlist.rev). Columns: lemma, zipf, tag count.
"""

from __future__ import annotations

import argparse
import gzip
from collections import defaultdict
from pathlib import Path

from wordfreq import zipf_frequency

OUT = Path(__file__).resolve().parents[1] / "src" / "pictorank" / "lexicon" / "wordnet" / "lemmas.tsv.gz"
PARTS = ("noun", "verb", "adj", "adv")


def read_names(wordnet_dir: Path) -> tuple[set[str], set[str]]:
    """Every lemma (lower case, spaces), and those that are names: always capitalised, and an
    instance in more than half of their synsets."""
    senses: dict[str, int] = defaultdict(int)
    instances: dict[str, int] = defaultdict(int)
    lower_case: dict[str, int] = defaultdict(int)
    for part in PARTS:
        for line in (wordnet_dir / f"data.{part}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):  # the licence header
                continue
            fields = line.split(" ")
            count = int(fields[3], 16)
            words = fields[4 : 4 + 2 * count : 2]
            is_instance = " @i " in line.split(" | ")[0]
            for word in words:
                lemma = word.split("(")[0].replace("_", " ").lower()  # adjectives' "(a)" markers
                senses[lemma] += 1
                lower_case[lemma] += word[0] == word[0].lower()
                instances[lemma] += is_instance
    names = {lemma for lemma in instances if 2 * instances[lemma] > senses[lemma] and not lower_case[lemma]}
    return set(instances), names


def read_tag_counts(wordnet_dir: Path) -> dict[str, int]:
    """lemma -> the sum of its senses' tag counts in WordNet's semantic concordance."""
    counts: dict[str, int] = defaultdict(int)
    for line in (wordnet_dir / "cntlist.rev").read_text(encoding="utf-8").splitlines():
        key, _, count = line.split(" ")
        counts[key.split("%")[0].replace("_", " ").lower()] += int(count)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wordnet_dir", type=Path, help="folder of WordNet 3.0's data.* and cntlist.rev files")
    parser.add_argument("--size", type=int, default=75_000, help="lemmas to keep, most frequent first")
    args = parser.parse_args()
    lemmas, names = read_names(args.wordnet_dir)
    tags = read_tag_counts(args.wordnet_dir)
    words = [w for w in lemmas - names if any(c.isalpha() for c in w)]
    rows = [(w, zipf_frequency(w, "en"), tags.get(w, 0)) for w in words]
    rows.sort(key=lambda row: (-row[1], -row[2], row[0]))
    kept = sorted(rows[: args.size])
    text = "".join(f"{w}\t{z:.2f}\t{t}\n" for w, z, t in kept)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "wb") as file, gzip.GzipFile(fileobj=file, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(text.encode("utf-8"))  # mtime 0: the same data gives the same bytes
    print(f"{len(lemmas)} lemmas, {len(names)} of them names; kept {len(kept)} (zipf >= {kept and min(r[1] for r in kept)}) "
          f"-> {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
