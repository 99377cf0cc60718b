"""The ``hub_*`` columns: hubness of the option, CSLS-style, in each encoder's space.

Some options sit close to every clue and would win by default; an option's hubness is its mean
cosine to its nearest train clues, and CSLS subtracts it from twice the cosine to this clue.
The base space's columns are ``hub_option`` / ``hub_csls``, the fine-tuned one's
``hub_ft_option`` / ``hub_ft_csls`` (fine-tuning pulls clue texts towards train answers, so an
option's hubness there is its own quantity: CSLS alone lifts fine-tuned cosine's val Hits@1;
docs/experiments/learned-ranker.md).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from pictorank.settings import DEFAULT_MAX_CACHED_STRINGS
from pictorank.encoders import Encoder
from pictorank.features.associations import Reference
from pictorank.features.products import row_by_row
from pictorank.query import Query, joined_text

NAMES = ("hub_option", "hub_csls")  # the base space's columns


def names(space: str) -> tuple[str, str]:
    """The columns `columns` makes for the encoder space `space` ('base' keeps its old names)."""
    return NAMES if space == "base" else (f"hub_{space}_option", f"hub_{space}_csls")


@dataclass
class HubnessMemo:
    """Each option's hubness against the train clues of `reference` in one encoder space,
    memoised: options recur across queries, so each is computed once, many in one matrix
    product. The memo forgets the least recently used options past `max_size`, so a server
    stays bounded (a feature extractor bounds it like its base encoder's memo).

    k : nearest train clues averaged for an option's hubness.
    space : whose clue vectors of `reference` to read ('base' or 'ft'); the encoder given to
        `warm` and `of` must be that space's.
    """

    reference: Reference
    k: int
    max_size: int = DEFAULT_MAX_CACHED_STRINGS
    values: OrderedDict[str, float] = field(default_factory=OrderedDict)
    space: str = "base"

    def _compute(self, encoder: Encoder, options: list[str]) -> dict[str, float]:
        option_clue = row_by_row(encoder.encode(options), self.reference.clue_vectors[self.space])
        for i, option in enumerate(options):
            option_clue[i, self.reference.rows_of(option)] = -1.0  # not its own clue
        h = min(self.k, option_clue.shape[1])
        computed = dict(zip(options, np.partition(option_clue, -h, axis=1)[:, -h:].mean(axis=1).tolist()))
        self.values.update(computed)
        while len(self.values) > self.max_size:
            self.values.popitem(last=False)
        return computed

    def warm(self, encoder: Encoder, options: Iterable[str]) -> None:
        """Compute the hubness of every option not memoised yet, in one matrix product."""
        missing = sorted(o for o in set(options) if o not in self.values)
        if missing:
            self._compute(encoder, missing)

    def of(self, encoder: Encoder, options: Sequence[str]) -> np.ndarray:
        known = {o: self.values[o] for o in options if o in self.values}
        for option in known:
            self.values.move_to_end(option)  # recently used: forgotten last
        missing = sorted(set(options) - known.keys())
        known.update(self._compute(encoder, missing) if missing else {})
        return np.array([known[o] for o in options])


def columns(q: Query, encoder: Encoder, memo: HubnessMemo) -> dict[str, np.ndarray]:
    """The hubness columns of `q`'s options in `memo`'s space, computed with that space's `encoder`."""
    joined = encoder.encode(list(q.options)) @ encoder.encode([joined_text(q.hints)])[0]
    hub = memo.of(encoder, q.options)
    option, csls = names(memo.space)
    return {option: hub, csls: 2 * joined - hub}
