"""The English words open-vocabulary mode guesses from, how common each is, and when a guess
counts as the answer.

The default lexicon is the vendored table `wordnet/lemmas.tsv.gz` (WordNet 3.0's lemmas less proper
names, each with its wordfreq Zipf frequency: scripts/build_lexicon_table.py). A deployment may
name its own list instead, one word a line, optionally followed by a tab and a Zipf frequency.
Data answers carry qualifiers ("library (building)"): a guess matches an answer when it equals
the answer or the answer without its parenthesised qualifier (`matches`), and two guesses that
differ only in case or qualifier are one guess (`guess_key`), offered in its plain form when the
lexicon has it (which matches every qualified answer).
"""

from __future__ import annotations

import gzip
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from pictorank.errors import DataError

DEFAULT_TABLE = Path(__file__).resolve().parent / "wordnet" / "lemmas.tsv.gz"
DEFAULT_SOURCE = "wordnet"
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")
# English function words: they carry no meaning a clue and a word could share.
STOPWORDS = frozenset("a an and or of the to in on at by for with from as is be into its it".split())


def without_qualifier(word: str) -> str:
    """"library (building)" -> "library"; a word without a final parenthesis is returned as it is."""
    base = _QUALIFIER.sub("", word).strip()
    return base or word.strip()


def guess_key(word: str) -> str:
    """What a player hears in a guess: case and qualifier do not make two guesses different."""
    return without_qualifier(word).casefold()


def matches(guess: str, answer: str) -> bool:
    """A guess is the answer when it equals it, or the answer without its qualifier (in any case):
    "library" and "Library" are "library (building)", "library (book)" is not."""
    return guess == answer or guess.strip().casefold() == without_qualifier(answer).casefold()


@dataclass(frozen=True)
class Lexicon:
    """Words, each with its Zipf frequency (about log10 of uses per billion words), and where they
    came from (`source`: "wordnet" or the path of a deployment's list)."""

    words: tuple[str, ...]
    zipf: np.ndarray
    source: str

    def __post_init__(self) -> None:
        if len(self.words) != len(self.zipf):
            raise ValueError(f"{len(self.words)} words but {len(self.zipf)} frequencies")

    def __len__(self) -> int:
        return len(self.words)

    def frequencies(self) -> dict[str, float]:
        return dict(zip(self.words, self.zipf.tolist()))

    def with_words(self, extra: Iterable[str]) -> "Lexicon":
        """This lexicon and `extra` (the data's answers, a word list): a new word gets the frequency
        of its form without qualifier when the lexicon knows it, else the lexicon's lowest."""
        known = self.frequencies()
        by_key = {guess_key(w): z for w, z in known.items()}
        floor = float(self.zipf.min()) if len(self.zipf) else 0.0
        added = sorted({w for w in extra if w not in known})
        words = self.words + tuple(added)
        zipf = np.concatenate([self.zipf, [by_key.get(guess_key(w), floor) for w in added]]).astype(np.float32)
        return Lexicon(words, zipf, self.source)


MAX_LIST_BYTES = 64 * 1024 * 1024  # a word list's size on disk (the vendored one: under 1 MB gzipped)
MAX_LIST_WORDS = 500_000  # words a list may hold: each is embedded when a service starts
MAX_WORD_CHARACTERS = 100  # as an option's: a word is guessed back as an option


def read_table(path: Path, source: str) -> Lexicon:
    """A word list: one word a line, optionally a tab and its Zipf frequency (more columns are
    ignored); gzip-compressed when the name ends in .gz. A word without a frequency gets 0.

    Checked where it is read, before anything is embedded: a regular file of at most
    MAX_LIST_BYTES (and as much unpacked), at most MAX_LIST_WORDS words of at most
    MAX_WORD_CHARACTERS, finite frequencies; a leading byte-order mark is dropped. Anything else
    is a DataError naming the file (and the line)."""
    raw = _read_list(path)
    try:
        lines = raw.decode("utf-8").removeprefix("\ufeff").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(path, None, None, f"cannot read the word list ({exc})") from None
    zipf: dict[str, float] = {}
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        word = fields[0].strip()
        if not word or "|" in word:
            continue
        if len(word) > MAX_WORD_CHARACTERS:
            raise DataError(path, number, "word", f"{len(word):,} characters long; a word has at most {MAX_WORD_CHARACTERS}")
        try:
            frequency = float(fields[1]) if len(fields) > 1 and fields[1].strip() else 0.0
        except ValueError:
            raise DataError(path, number, "frequency", f"not a number: {fields[1][:40]!r}") from None
        if not np.isfinite(frequency):
            raise DataError(path, number, "frequency", f"not a finite number: {fields[1][:40]!r}")
        zipf[word] = frequency
        if len(zipf) > MAX_LIST_WORDS:
            raise DataError(path, number, None, f"more than {MAX_LIST_WORDS:,} words; split the list or keep the common ones")
    if not zipf:
        raise DataError(path, None, None, "the lexicon names no words")
    words = tuple(sorted(zipf))
    return Lexicon(words, np.array([zipf[w] for w in words], dtype=np.float32), source)


def _read_list(path: Path) -> bytes:
    """The list's bytes (unpacked when gzipped), refused before reading when it is no regular
    file (a FIFO or a device would hang the read) or larger than MAX_LIST_BYTES."""
    try:
        if path.exists() and not path.is_file():
            raise DataError(path, None, None, "not a regular file: give a word list, one word a line")
        size = path.stat().st_size
        if size > MAX_LIST_BYTES:
            raise DataError(path, None, None, f"{size:,} bytes; a word list has at most {MAX_LIST_BYTES:,}")
        raw = path.read_bytes()
        if path.suffix != ".gz":
            return raw
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacked:
            data = unpacked.read(MAX_LIST_BYTES + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise DataError(path, None, None, f"cannot read the word list ({exc})") from None
    if len(data) > MAX_LIST_BYTES:
        raise DataError(path, None, None, f"more than {MAX_LIST_BYTES:,} bytes unpacked; a word list has at most that")
    return data


def default_lexicon() -> Lexicon:
    """The vendored English lexicon (WordNet lemmas with wordfreq frequencies)."""
    return read_table(DEFAULT_TABLE, DEFAULT_SOURCE)


def load_lexicon(name: str) -> Lexicon:
    """`wordnet` (the vendored table) or the path of a deployment's word list."""
    if name == DEFAULT_SOURCE:
        return default_lexicon()
    return read_table(Path(name), name)
