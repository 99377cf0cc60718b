"""The two rankers that learn nothing: the task's `seed` baseline and plain `cosine`."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pictorank.encoders import Encoder
from pictorank.query import Query, joined_text, seed_text
from pictorank.ranker.base import Ranker
from pictorank.ranker.calibration import shipped_calibrator


class _OneEncoderRanker(Ranker):
    """A ranker of one encoder and no fitting: its confidence comes from the calibration shipped
    for its method (fitted on the bundled train set)."""

    def __init__(self, encoder: Encoder | None = None) -> None:
        self.encoder = encoder or Encoder()
        self.calibrator = shipped_calibrator(self.method)

    def encoders(self) -> list[Encoder]:
        return [self.encoder]


class SeedRanker(_OneEncoderRanker):
    """The task statement's baseline, reproduced as the reference.

    One row at a time, as the task's script does: the hints wrapped in a tagged template are
    encoded as one sentence and the options are ranked by cosine similarity to it.
    """

    method = "seed"

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        scores = []
        for query in queries:
            clue = self.encoder.encode([seed_text(query.hints)])[0]
            scores.append(self.encoder.encode(list(query.options)) @ clue)
        return scores


class CosineRanker(_OneEncoderRanker):
    """Options ranked by cosine similarity to the clue's descriptions joined into one string.

    Joined text beats every position-weighted pooling of separate hint embeddings on train
    (bench/batch.py measures both), so it is the only clue text this ranker uses.
    """

    method = "cosine"

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        # Encode every distinct string of the whole batch at once, then rank with numpy.
        self.encoder.encode(list(dict.fromkeys(s for q in queries for s in (joined_text(q.hints), *q.options))))
        scores = []
        for query in queries:
            clue = self.encoder.encode([joined_text(query.hints)])[0]
            scores.append(self.encoder.encode(list(query.options)) @ clue)
        return scores
