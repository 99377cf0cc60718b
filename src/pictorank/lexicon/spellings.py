"""One guess per word, however it is spelled: "air traveler" and "air traveller", "wristwatch" and
"wrist watch", "neighborhood" and "neighbourhood" are one word to a player, and a list of ten
guesses that holds both wastes a place and reads as a machine's.

Two lexicon words are spellings of one word when WordNet gives them the same definition (the
gloss of their first sense: they are lemmas of one synset) and their letters, without spaces,
hyphens, dots and apostrophes, are the same, or differ by one edit (one letter added, dropped,
changed, or two swapped: rapidfuzz's optimal string alignment distance) that keeps the first
letter and is not an ending added to the other word, in words of at least MIN_LETTERS letters.
So traveller/traveler, organisation/organization, centre/center and foetal/fetal are one word;
an inflection (perceive/perceived), a prefix (distrust/mistrust) or another word
(behold/beholden) is not, nor are "mum" and "mom", short enough for one edit to make another. "colour" has another first
sense than "color" and stays apart.

A group is shown in the spelling retrieval meets first (`playable`): the one nearest the clue.
Not the most frequent: the lexicon's frequencies of phrases are estimates from their words
(wordfreq), which put "fire fighter" (Zipf 4.28) far above "firefighter" (3.37).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Sequence

from rapidfuzz.distance import OSA

MAX_EDITS = 1
MIN_LETTERS = 5
_JOINERS = re.compile(r"[\s\-.'\u2019]+")


def letters(word: str) -> str:
    """The word as its spelling is compared: lower case, without spaces, hyphens, dots and apostrophes."""
    return _JOINERS.sub("", word.casefold())


def same_word(a: str, b: str) -> bool:
    """Whether two words with the same definition are one word spelled two ways (the module's rule)."""
    x, y = letters(a), letters(b)
    if x == y:
        return True
    return (min(len(x), len(y)) >= MIN_LETTERS and x[0] == y[0] and not (x.startswith(y) or y.startswith(x))
            and OSA.distance(x, y, score_cutoff=MAX_EDITS) <= MAX_EDITS)


def spelling_groups(words: Sequence[str], glosses: Mapping[str, str]) -> dict[str, str]:
    """Each word that has other spellings among `words` -> its group's key (the alphabetically
    first spelling); words with one spelling are left out. `glosses`: word -> its first sense's
    definition (pictorank.lexicon.glosses)."""
    by_gloss: dict[str, list[str]] = defaultdict(list)
    for word in words:
        gloss = glosses.get(word)
        if gloss is not None:
            by_gloss[gloss].append(word)
    groups: dict[str, str] = {}
    for group in by_gloss.values():
        if len(group) < 2:
            continue
        for members in _spelling_sets(group):
            if len(members) > 1:
                key = min(members)
                groups.update({w: key for w in members})
    return groups


def _spelling_sets(words: list[str]) -> list[list[str]]:
    """`words` (one definition's) split into sets of spellings of one word: linked by `same_word`,
    transitively (a small union-find over the pairs)."""
    parent = list(range(len(words)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(words)):
        for j in range(i + 1, len(words)):
            if same_word(words[i], words[j]):
                parent[root(j)] = root(i)
    sets: dict[int, list[str]] = defaultdict(list)
    for i, word in enumerate(words):
        sets[root(i)].append(word)
    return list(sets.values())
