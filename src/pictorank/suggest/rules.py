"""The game's rules for a clue-giver, and the checks on what a caller may ask for.

Rule: a clue may not use a pictogram that *names* the secret word or a word the guesser must not
pick instead (`avoid`): one whose description the word restates, inflections included (`cat` may
not clue `cats`, nor `tower` a clue that must not read as tower); parts of the word are fine
(`sun` and `flower` for `sunflower`, `card` for `credit card`). It is open play's echo rule
(`pictorank.lexicon.echo`). A clue never repeats a pictogram. Everything here works on plain text,
so it holds for any vocabulary.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Sequence

from pictorank.errors import UsageError
from pictorank.lexicon.echo import names
from pictorank.puzzles import is_blank

MAX_WORD_LENGTH = 100  # as the HTTP API's MAX_TEXT_LENGTH: a word is an option, options are <= 100 chars
MAX_AVOID = 100  # each avoid word is encoded per request: bounded so one request stays fast
MAX_CLUE_LENGTH = 6  # the longest train clues have 6 pictograms
MAX_TOP = 20

_PARENTHESES = re.compile(r"\([^)]*\)")
_WORDS = re.compile(r"[^\W_]+")  # letters and digits of any script
_POSSESSIVE = re.compile(r"(?<=[^\W_])['\u2019]s\b", re.IGNORECASE)  # dog's, dog’s -> dog
# Plural and verb forms English does not make by adding endings.
_IRREGULAR = {
    "men": "man", "women": "woman", "children": "child", "feet": "foot", "teeth": "tooth", "mice": "mouse",
    "geese": "goose", "people": "person", "oxen": "ox", "lice": "louse", "dice": "die",
}


def words_of(text: str) -> list[str]:
    """Lower-case words of `text` outside parentheses, possessives dropped: `Thai (language)` ->
    ['thai'], `children's song` -> ['children', 'song']."""
    return _words(_PARENTHESES.sub(" ", text))


def _words(text: str) -> list[str]:
    return _WORDS.findall(_POSSESSIVE.sub("", text).lower())


def synonyms(description: str) -> list[str]:
    """The comma-separated synonyms of a pictogram description, stripped, none empty."""
    return [s.strip() for s in description.split(",") if s.strip()]


def lemmas(word: str) -> set[str]:
    """The word itself and every base form it could be an inflection of (plural, -ing, -ed, 's).

    Generous on purpose: a rule that bans a pictogram too often costs a little choice, one that
    lets the secret word through breaks the game.
    """
    forms = {word}
    if word in _IRREGULAR:
        forms.add(_IRREGULAR[word])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        forms.add(word[:-1])
    if word.endswith("es") and len(word) >= 4:
        forms.add(word[:-2])  # boxes -> box, goes -> go
    if word.endswith("ying") and len(word) >= 5:
        forms.add(word[:-4] + "ie")  # lying -> lie
    if word.endswith("ies") and len(word) > 4:
        forms.add(word[:-3] + "y")
    if word.endswith("ves") and len(word) > 4:
        forms.update({word[:-3] + "f", word[:-3] + "fe"})
    for ending in ("ing", "ed"):
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 3:
            forms.update({stem, stem + "e"})
            if len(stem) >= 4 and stem[-1] == stem[-2]:
                forms.add(stem[:-1])  # running -> run
    return forms


def same_word(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two word sequences are one word up to inflection, of any of their words: the
    inflected word of a compound is not always the last (`birds of prey`, `mothers-in-law`)."""
    if not a or len(a) != len(b):
        return False
    return all(x == y or lemmas(x) & lemmas(y) for x, y in zip(a, b))


def names_word(description: str, word: str) -> bool:
    """Whether a pictogram with this description names `word` (the rule: it may not clue it), by
    open play's echo rule (`pictorank.lexicon.echo.names`): one rule for both sides of the game."""
    return names(description, word)


def is_valid_clue(descriptions: Sequence[str], word: str, avoid: Sequence[str] = ()) -> bool:
    """A clue follows the rules: no pictogram names the word or an avoid word, and none repeats."""
    return len(set(descriptions)) == len(descriptions) and not any(
        names_word(d, w) for d in descriptions for w in (word, *avoid))


# -- what callers may ask for ---------------------------------------------------------------------


def check_word(word: object, what: str = "word") -> str:
    """The word stripped, or a UsageError saying what is wrong with it."""
    if not isinstance(word, str):
        raise UsageError(f"the {what} must be text, not {type(word).__name__}")
    stripped = word.strip()
    if is_blank(stripped):
        raise UsageError(f"the {what} is blank")
    if len(stripped) > MAX_WORD_LENGTH:
        raise UsageError(f"the {what} is {len(stripped)} characters long; at most {MAX_WORD_LENGTH} are allowed")
    if "|" in stripped:
        raise UsageError(f"the {what} {stripped[:40]!r} contains '|', which separates options in the task's files")
    return stripped


def check_request(word: object, avoid: Sequence[object] | None, max_length: object, top: object) -> tuple[str, list[str]]:
    """Check one suggestion request; returns the clean word and avoid list (repeats and the word
    itself dropped, ignoring case and accents)."""
    clean = check_word(word)
    if avoid is None:
        avoid = []
    if isinstance(avoid, str) or not isinstance(avoid, Sequence):
        raise UsageError("avoid must be a list of words")
    if len(avoid) > MAX_AVOID:
        raise UsageError(f"{len(avoid)} avoid words given; at most {MAX_AVOID} are allowed")
    # Repeats and the word itself go, up to case and accents: the encoder reads neither, so `Cat`
    # or `cåt` beside `cat` would tie with the word under every clue and the word could never win.
    kept = {_folded(clean): clean}
    for other in (check_word(a, "avoid word") for a in avoid):
        kept.setdefault(_folded(other), other)
    others = list(kept.values())[1:]
    _check_int(max_length, "max_length", 1, MAX_CLUE_LENGTH)
    _check_int(top, "top", 1, MAX_TOP)
    return clean, others


def _folded(text: str) -> str:
    """`text` as the uncased encoder's tokenizer reads it: lower case, accents stripped."""
    decomposed = unicodedata.normalize("NFD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _check_int(value: object, name: str, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise UsageError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
