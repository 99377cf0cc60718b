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

    def clue_text(self, hints: Sequence[str]) -> str:
        """The one sentence a clue's hints are encoded as."""
        raise NotImplementedError

    def score(self, queries: Sequence[Query]) -> list[np.ndarray]:
        # Every distinct string of the batch encoded at once, then each row ranked with numpy: a
        # string's vector does not depend on its batch, and a row's few strings alone make the
        # encoder's batches small.
        clues = [self.clue_text(q.hints) for q in queries]
        self.encoder.encode(list(dict.fromkeys(s for clue, q in zip(clues, queries) for s in (clue, *q.options))))
        return [self.encoder.encode(list(q.options)) @ self.encoder.encode([clue])[0] for clue, q in zip(clues, queries)]


class SeedRanker(_OneEncoderRanker):
    """The task statement's baseline, reproduced as the reference.

    As the task's script does: the hints wrapped in a tagged template are encoded as one sentence
    and the options are ranked by cosine similarity to it.
    """

    method = "seed"

    def clue_text(self, hints: Sequence[str]) -> str:
        return seed_text(hints)


class CosineRanker(_OneEncoderRanker):
    """Options ranked by cosine similarity to the clue's descriptions joined into one string.

    Joined text beats every position-weighted pooling of separate hint embeddings on train
    (bench/batch.py measures both), so it is the only clue text this ranker uses.
    """

    method = "cosine"

    def clue_text(self, hints: Sequence[str]) -> str:
        return joined_text(hints)
