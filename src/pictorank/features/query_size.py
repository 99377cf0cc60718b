"""The ``q_*`` columns: size of the query (number of hints and options), the same for every option.

The option's own shape (length, word count, brackets) was tried and left out: it is a prior of
Bliss glosses that made the ranker worse on the emoji vocabulary and did not help on val.
"""

from __future__ import annotations

import numpy as np

from pictorank.query import Query

NAMES = ("q_hints", "q_options")


def columns(q: Query) -> dict[str, np.ndarray]:
    n_opt = len(q.options)
    return {"q_hints": np.full(n_opt, float(len(q.hints))), "q_options": np.full(n_opt, float(n_opt))}
