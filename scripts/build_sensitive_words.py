"""Build src/pictorank/api/family/sensitive_words.tsv: the words the game's family-safe rounds skip
(see pictorank.api.family), each with the WordNet topic that makes it sensitive.

Run once, by hand, over Princeton WordNet 3.0's database files (not needed to use or test
pictorank; the table is vendored):

    apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wn
    python scripts/build_sensitive_words.py /tmp/wn/usr/share/wordnet

How a word is decided, from WordNet alone (no hand list of words):
1. Sensitive synsets: the topics in TOPICS and every kind of them (the hyponym closure, instances
   included); the members of WordNet's usage domains in USAGES (obscenities, slurs,
   disparagements); and the members of the topic domains of any synset found so far.
2. Sensitive terms: the lemmas all of whose senses are sensitive synsets ('anus', 'feces',
   'sexual intercourse'; not 'sex', which also means gender).
3. A synset whose definition uses a sensitive term is sensitive too ('venereal disease: a
   communicable infection transmitted by sexual intercourse').
4. A word is sensitive when its first sense (its most common meaning, WordNet's order: nouns,
   verbs, adjectives, adverbs) is.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "pictorank" / "api" / "family" / "sensitive_words.tsv"
POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
# Topic synsets (noun offsets in WordNet 3.0's data.noun) -> the topic's name in the table.
TOPICS = {
    "00844254": "sex",         # sexual activity: activities associated with sexual intercourse
    "05514081": "sex",         # genitalia: external sex organs
    "05538016": "excretion",   # anus
    "14853947": "excretion",   # body waste: waste matter discharged from the body
    "13459088": "excretion",   # defecation
}
# Usage-domain synsets whose members are offensive words.
USAGES = {
    "07124340": "obscenity",      # obscenity, vulgarism, dirty word
    "06718862": "slur",           # ethnic slur
    "06717170": "disparagement",  # disparagement, derogation
}
HYPONYMS = ("~", "~i")
MIN_TERM_LETTERS = 4

Key = tuple[str, str]  # (offset, pos)


class WordNet:
    """The parts of WordNet's database files this script needs: synsets' lemmas, pointers and
    definitions, and each lemma's senses in order."""

    def __init__(self, folder: Path) -> None:
        self.lemmas: dict[Key, list[str]] = {}
        self.pointers: dict[Key, list[tuple[str, Key]]] = {}
        self.definitions: dict[Key, str] = {}
        self.senses: dict[str, list[Key]] = defaultdict(list)
        for name, pos in POS.items():
            self._read_data(folder / f"data.{name}", pos)
        for name, pos in POS.items():  # nouns first: WordNet's order of a word's senses
            self._read_index(folder / f"index.{name}", pos)

    def _read_data(self, path: Path, pos: str) -> None:
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue  # the licence header
            head, _, gloss = line.partition(" | ")
            fields = head.split()
            key = (fields[0], pos)
            count = int(fields[3], 16)
            self.lemmas[key] = [_lemma(fields[4 + 2 * i]) for i in range(count)]
            at = 4 + 2 * count
            self.pointers[key] = [(fields[at + 1 + 4 * k], (fields[at + 2 + 4 * k], _pos(fields[at + 3 + 4 * k])))
                                  for k in range(int(fields[at]))]
            self.definitions[key] = gloss.split('; "')[0].strip().lower()

    def _read_index(self, path: Path, pos: str) -> None:
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            fields = line.split()
            synsets = int(fields[2])
            self.senses[_lemma(fields[0])].extend((offset, pos) for offset in fields[-synsets:])


def _lemma(word: str) -> str:
    return re.sub(r"\(.*\)$", "", word).replace("_", " ").lower()


def _pos(symbol: str) -> str:
    return "a" if symbol == "s" else symbol


def sensitive_synsets(wordnet: WordNet) -> dict[Key, str]:
    """Steps 1 to 3: every sensitive synset -> its topic."""
    found: dict[Key, str] = {}
    for offset, topic in TOPICS.items():
        _closure(wordnet, (offset, "n"), topic, found)
    usages = {(offset, "n"): topic for offset, topic in USAGES.items()}
    domains = {key: topic for key, topic in found.items()}
    for key, pointers in wordnet.pointers.items():
        for symbol, target in pointers:
            if symbol == ";u" and target in usages:
                found.setdefault(key, usages[target])
            elif symbol == ";c" and target in domains:
                found.setdefault(key, domains[target])
    terms = sensitive_terms(wordnet, found)
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")\b")
    for key, definition in wordnet.definitions.items():
        match = pattern.search(definition)
        if key not in found and match:
            found[key] = terms[match.group(1)]
    return found


def _closure(wordnet: WordNet, root: Key, topic: str, found: dict[Key, str]) -> None:
    stack = [root]
    while stack:
        key = stack.pop()
        if key in found:
            continue
        found[key] = topic
        stack.extend(target for symbol, target in wordnet.pointers[key] if symbol in HYPONYMS)


def sensitive_terms(wordnet: WordNet, found: dict[Key, str]) -> dict[str, str]:
    """Step 2: the lemmas every sense of which is sensitive -> the topic of their first sense."""
    return {lemma: found[senses[0]] for lemma, senses in wordnet.senses.items()
            if len(lemma.replace(" ", "")) >= MIN_TERM_LETTERS and all(s in found for s in senses)}


def sensitive_words(wordnet: WordNet) -> dict[str, str]:
    """Step 4: every lemma whose first sense is sensitive -> its topic."""
    found = sensitive_synsets(wordnet)
    return {lemma: found[senses[0]] for lemma, senses in wordnet.senses.items() if senses[0] in found}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not (Path(argv[0]) / "data.noun").is_file():
        print("usage: build_sensitive_words.py WORDNET_DICT_FOLDER (holding data.noun, index.noun, ...)", file=sys.stderr)
        return 2
    words = sensitive_words(WordNet(Path(argv[0])))
    header = "# word\ttopic: built by scripts/build_sensitive_words.py from WordNet 3.0 (licence: ../../lexicon/wordnet/LICENSE)\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(header + "".join(f"{w}\t{words[w]}\n" for w in sorted(words)), encoding="utf-8")
    counts = defaultdict(int)
    for topic in words.values():
        counts[topic] += 1
    print(f"{len(words)} words -> {OUT}: " + ", ".join(f"{t} {n}" for t, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
