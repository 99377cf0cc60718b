"""The ``gloss_*`` columns: how close a candidate word's dictionary definition is to the clue, for
open play's ranker (pictorank.open_play).

A clue is a definition in pictures, genus first and differentiae after it, and a dictionary gloss
is the same definition in words: "cold + white + falling" is far nearer to snow's "precipitation
falling from clouds in the form of ice crystals" than to the word "snow" alone. The glosses
(WordNet's first sense, pictorank.lexicon.glosses) are embedded once by the base encoder and
stored with the lexicon; a clue's hints are embedded by the same encoder for the cosine columns
anyway, so these columns cost a request one product of small matrices. A word without a gloss
(a deployment's own word, most phrases) gets no value (NaN), which LightGBM treats as missing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pictorank.encoders import Encoder, StoredVectors
from pictorank.query import Query, joined_text

GLOSS_COLUMNS = ("gloss_cos", "gloss_z", "gloss_hint_max", "gloss_hint_min", "gloss_hint_mean")


def gloss_columns(clue: np.ndarray, hints: np.ndarray, glosses: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
    """Each candidate's gloss cosine to the clue's joined text (`clue`, a unit vector), that
    cosine standardised over the candidates that have a gloss, and its per-hint cosines' max, min
    and mean (`hints`: the hints' unit vectors, one row each); NaN where `glosses` has None."""
    known = np.array([g is not None for g in glosses])
    columns = {name: np.full(len(glosses), np.nan) for name in GLOSS_COLUMNS}
    if not known.any():
        return columns
    vectors = np.stack([g for g in glosses if g is not None])
    cosine = vectors @ clue
    per_hint = vectors @ hints.T
    spread = cosine.std()
    columns["gloss_cos"][known] = cosine
    columns["gloss_z"][known] = (cosine - cosine.mean()) / spread if spread > 0 else 0.0
    columns["gloss_hint_max"][known] = per_hint.max(axis=1)
    columns["gloss_hint_min"][known] = per_hint.min(axis=1)
    columns["gloss_hint_mean"][known] = per_hint.mean(axis=1)
    return columns


def queries_gloss_columns(queries: Sequence[Query], base: Encoder, glosses: StoredVectors | None) -> dict[str, np.ndarray]:
    """GLOSS_COLUMNS of every query's options, concatenated in order; the clue and hints are
    embedded by `base` (whose memo holds them once the extractor has run), the glosses read from
    `glosses` (None: no word has one)."""
    columns = [gloss_columns(base.encode([joined_text(q.hints)])[0], base.encode(list(q.hints)),
                             [glosses.get(o) if glosses is not None else None for o in q.options])
               for q in queries]
    return {name: np.concatenate([c[name] for c in columns]) if columns else np.zeros(0) for name in GLOSS_COLUMNS}
