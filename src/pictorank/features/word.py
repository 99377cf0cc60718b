"""The ``open_*`` columns: what a candidate word is on its own, for open play's ranker
(pictorank.open_play), which chooses among a lexicon's words rather than a puzzle's options.

A lexicon's nearest words to a clue range from everyday words to rare compounds and phrases that
merely restate a hint; a puzzle's options never do. So open play's ranker also reads how common
the word is (its Zipf frequency, raw and standardised over the clue's candidates: the frequency
prior, learned rather than added with a fixed weight) and how many words it has. They are not
among the extractor's columns because they need the lexicon's frequencies, which a ranker of
given options does not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pictorank.query import Query

WORD_COLUMNS = ("open_zipf", "open_zipf_z", "open_words")


def word_columns(options: Sequence[str], zipf: Mapping[str, float]) -> dict[str, np.ndarray]:
    """Each option's frequency (a word the lexicon lacks counts as the rarest of the clue's),
    that frequency standardised over the options, and its number of words (hyphens split)."""
    frequency = np.array([zipf.get(o, np.nan) for o in options], dtype=np.float64)
    known = ~np.isnan(frequency)
    frequency = np.where(known, frequency, frequency[known].min() if known.any() else 0.0)
    spread = frequency.std()
    standardised = (frequency - frequency.mean()) / spread if spread > 0 else np.zeros_like(frequency)
    words = np.array([len(o.replace("-", " ").split()) for o in options], dtype=np.float64)
    return {"open_zipf": frequency, "open_zipf_z": standardised, "open_words": words}


def queries_word_columns(queries: Sequence[Query], zipf: Mapping[str, float]) -> dict[str, np.ndarray]:
    """WORD_COLUMNS of every query's options, concatenated in order."""
    columns = [word_columns(q.options, zipf) for q in queries]
    return {name: np.concatenate([c[name] for c in columns]) if columns else np.zeros(0) for name in WORD_COLUMNS}
