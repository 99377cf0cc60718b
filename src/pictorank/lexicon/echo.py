"""The game's rule that the answer is not a pictogram's own word: a guess that merely restates a
hint ("cold" for cold + white + falling, "fall" for its "falling") is never offered back.

A guess echoes the hints when each of its words is a hint word or an inflection of one: the same
crude stem (plural, -ing, -ed, a doubled final consonant), or an irregular form WordNet lists
("freeze" restates "frozen", "fall" restates "fell": `wordnet/inflections.tsv.gz`, built by
scripts/build_inflection_table.py). A compound or phrase that adds a word ("snowfall", "rain
water" for sky + water + falling) is a real guess and stays; so does a derivation ("farmer" for
person + farm), which is how many Bliss answers are made.

The clue-giver keeps the same rule from the other side (`names`): a pictogram whose description
the secret word, or a word the guesser must not pick, restates is never part of its clue.
"""

from __future__ import annotations

import gzip
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from pictorank.lexicon.words import without_qualifier
from pictorank.puzzles import visible_text

INFLECTIONS = Path(__file__).resolve().parent / "wordnet" / "inflections.tsv.gz"
_WORD = re.compile(r"[a-z0-9']+")
_POSSESSIVE = re.compile(r"(?<=[a-z0-9])'s\b")
_SUFFIXES = ("ing", "ied", "ies", "ed", "es", "s")


def stem(word: str) -> str:
    """A crude English stem that is enough to tell an inflection of a hint word: falling -> fall,
    stripes -> stripe, running -> run, flies -> fly."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (2 if suffix in ("ies", "ied") else 3):
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            if suffix in ("ing", "ed") and len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "ls":
                word = word[:-1]  # running -> run; but falling stays fall, and dressed dress
            break
    return word.rstrip("e") or word


def read_forms(path: Path) -> dict[str, frozenset[str]]:
    """A table of word -> other forms of it: one word a line, then its forms, tab-separated."""
    table: dict[str, frozenset[str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            word, *forms = line.rstrip("\n").split("\t")
            table[word] = frozenset(forms)
    return table


@lru_cache(maxsize=1)
def irregular_inflections() -> Mapping[str, frozenset[str]]:
    """Inflected form -> its base forms, for the forms no ending explains (read once per process)."""
    return read_forms(INFLECTIONS)


def word_stems(word: str, forms: Mapping[str, frozenset[str]]) -> set[str]:
    """The stems a word counts as: its own, and those of the base forms `forms` gives it."""
    return {stem(word), *(stem(base) for base in forms.get(word, ()))}


def words_of(text: str) -> list[str]:
    """The words of `text` as a reader sees them: invisible characters cannot hide a hint's word,
    and a possessive is its word ("dog's" is dog)."""
    plain = without_qualifier(visible_text(text)).casefold().replace("\u2019", "'")
    return _WORD.findall(_POSSESSIVE.sub("", plain))


def hint_stems(hints: Iterable[str], related: Mapping[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The stems of every word of the hint descriptions and of its irregular base forms; `related`
    adds further words that restate a hint word (an experiment's rule, docs/experiments/open-vocabulary.md)."""
    forms = irregular_inflections()
    stems: set[str] = set()
    for hint in hints:
        for word in words_of(hint):
            stems |= word_stems(word, forms)
            stems |= {stem(other) for other in (related or {}).get(word, ()) if " " not in other}
    return frozenset(stems)


def echoes(guess: str, stems: frozenset[str]) -> bool:
    """Whether every word of `guess` is one of the hints' words (by stem, irregular forms included)."""
    forms = _guess_forms(guess)
    return bool(forms) and all(f & stems for f in forms)


def _guess_forms(guess: str) -> list[set[str]]:
    """The stems each word of `guess` counts as."""
    forms = irregular_inflections()
    return [word_stems(w, forms) for w in words_of(guess)]


def names(description: str, word: str) -> bool:
    """Whether a pictogram with this description names `word`, so that it may not clue it: the
    word restates the description as a guess restates its hints (the rule above, one rule for
    open play's guesses and the clue-giver's pictograms). `cat` names cats and Cat's; parts of
    the word do not name it (`sun` and `flower` for sunflower, `card` for credit card)."""
    return echoes(word, _description_stems(description))


def named_among(descriptions: Sequence[str], words: Sequence[str]) -> list[bool]:
    """For each description, whether it names one of `words` (`names`), all checked at once: only
    a description sharing a stem with the words can name one (a request checks every pictogram
    against up to a hundred words)."""
    targets = [f for f in map(_guess_forms, words) if f]
    anywhere = set().union(*(stems for forms in targets for stems in forms))
    named = []
    for description in descriptions:
        stems = _description_stems(description)
        named.append(not stems.isdisjoint(anywhere) and any(all(f & stems for f in forms) for forms in targets))
    return named


@lru_cache(maxsize=8192)
def _description_stems(description: str) -> frozenset[str]:
    """A pictogram's stems, once per process: the clue-giver checks every description for every
    request."""
    return hint_stems([description])
