"""The columns open play's ranker reads beside the learned ranker's: the one place they are
assembled, for training's rows and for a served request alike.

- WORD_COLUMNS (pictorank.features.word): how common a candidate is, how many words it has;
- GLOSS_COLUMNS (pictorank.features.gloss): how near its dictionary gloss is to the clue;
- WORDNET_COLUMNS (pictorank.features.wordnet): do the hints name its kind or define it.

A new column is one more group here (its module in features/, its names in `OPEN_PLAY_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Sequence

import numpy as np

from pictorank.encoders import Encoder, StoredVectors
from pictorank.features.gloss import GLOSS_COLUMNS, queries_gloss_columns
from pictorank.features.word import WORD_COLUMNS, queries_word_columns
from pictorank.features.wordnet import WORDNET_COLUMNS, queries_wordnet_columns
from pictorank.lexicon.facts import default_facts
from pictorank.query import Query

if TYPE_CHECKING:
    import pandas as pd

OPEN_PLAY_COLUMNS = (*WORD_COLUMNS, *GLOSS_COLUMNS, *WORDNET_COLUMNS)


def column_names(with_glosses: bool) -> tuple[str, ...]:
    """The open-play columns a ranker is fitted with: the gloss group only where the lexicon's
    glosses are there to read."""
    return tuple(n for n in OPEN_PLAY_COLUMNS if with_glosses or n not in GLOSS_COLUMNS)


def add_open_play_columns(table: "pd.DataFrame", queries: Sequence[Query], zipf: Mapping[str, float],
                          base: Encoder, glosses: StoredVectors | None,
                          wanted: Collection[str] = OPEN_PLAY_COLUMNS) -> "pd.DataFrame":
    """`table` (the learned ranker's columns of `queries`' options, in order) with the open-play
    columns of each group that `wanted` names a column of. `base` embeds the clue and hints for
    the gloss columns (its memo holds them once the extractor has run); `glosses` are the
    lexicon's gloss vectors (None: no word has one, and the gloss columns are empty)."""
    extra = queries_word_columns(queries, zipf) if any(n in wanted for n in WORD_COLUMNS) else {}
    if any(name in wanted for name in GLOSS_COLUMNS):
        extra |= queries_gloss_columns(queries, base, glosses)
    if any(name in wanted for name in WORDNET_COLUMNS):
        extra |= queries_wordnet_columns(queries, default_facts())
    for name, values in extra.items():
        table[name] = values.astype(np.float32)
    return table
