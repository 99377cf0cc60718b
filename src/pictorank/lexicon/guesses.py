"""How open-vocabulary mode turns the ranker's order of retrieved words into guesses a player
would accept: hint words never echoed back (`echo`), one guess per word whatever its case or
qualifier, and common words preferred by a frequency prior.

The prior adds `weight` x the word's Zipf frequency, standardised over the clue's candidates, to
the ranker's score standardised the same way: both then speak in standard deviations, so one
weight suits a cosine, a seed score and LambdaMART's scores alike. The weight is chosen by
cross-validation on the train puzzles (bench/open_vocab.py --choose-weight).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from pictorank.lexicon.echo import echoes, hint_stems
from pictorank.lexicon.words import guess_key

DEFAULT_PRIOR_WEIGHT = 0.2


def _standardised(values: np.ndarray) -> np.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def playable(hints: Sequence[str], options: Sequence[str],
             related: Mapping[str, frozenset[str]] | None = None,
             spellings: Mapping[str, str] | None = None) -> list[str]:
    """`options` (nearest first) without the hints' own words and without repeats of a guess: a
    word met in several forms keeps the place of the first, in its plain form when it was met
    ("library" for "library (building)", which it matches) and otherwise its first. `spellings`:
    word -> its spelling group's key (pictorank.lexicon.spellings), so that two spellings of a word
    are one guess too, in the spelling met first. `related`: see `hint_stems`."""
    stems = hint_stems(hints, related)
    place: dict[str, int] = {}
    kept: list[str] = []
    for option in options:
        plain = guess_key(option)
        key = guess_key(spellings.get(option, option)) if spellings else plain
        if key in place:
            first = kept[place[key]]
            if option.strip().casefold() == plain and guess_key(first) == plain != first.strip().casefold():
                kept[place[key]] = option  # the plain form of the word met first
            continue
        if echoes(option, stems):
            continue
        place[key] = len(kept)
        kept.append(option)
    return kept


def with_prior(options: Sequence[str], scores: Sequence[float], zipf: Mapping[str, float],
               weight: float = DEFAULT_PRIOR_WEIGHT) -> tuple[list[str], list[float]]:
    """The options re-ordered by standardised score + `weight` x standardised frequency (an
    unknown word counts as the rarest); returns the new order and its combined scores."""
    if not options:
        return [], []
    frequency = np.array([zipf.get(o, np.nan) for o in options], dtype=np.float64)
    frequency = np.where(np.isnan(frequency), np.nanmin(frequency) if not np.isnan(frequency).all() else 0.0, frequency)
    combined = _standardised(np.asarray(scores, dtype=np.float64)) + weight * _standardised(frequency)
    order = np.argsort(-combined, kind="stable")
    return [options[i] for i in order], [float(combined[i]) for i in order]
