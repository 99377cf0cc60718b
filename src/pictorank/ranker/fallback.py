"""The learned ranker's hedge for clues from another vocabulary: a blend towards plain cosine.

LightGBM learns from Bliss how far to trust what it learned there (the fine-tuned encoder, the
association tables), and the out-of-fold rows built far from home (pictorank.train.oof) show it
unseen descriptions and answer kinds. What Bliss cannot show it is text unlike Bliss altogether:
on emoji clues whose answers are names ('Harry Potter', 'Statue of Liberty') the fine-tuned
encoder ranks worse than the base one, and a ranker that leans on it loses to plain cosine.

So each row's score adds the base encoder's cosine in proportion to how much of the clue the
training data never saw: z(LightGBM) + (1 - known) * z(cosine), z-scored within the row, `known`
being the share of the clue's descriptions used by train clues (``fam_hints_known``). A clue of
the training vocabulary is ranked by LightGBM alone; a clue of an unseen vocabulary by the two
experts at equal weight, the natural choice when nothing says which is right (half the weight was
measured too: see README "Transfer").

The blend is expressed in LightGBM's own units (mean and spread of the row's LightGBM scores):
score = LightGBM + (1 - known) * std(LightGBM) * z(cosine). Within a row that is a positive
affine map of the z-score sum, so the order is the same, but a blended row's top score and margin
stay on the scale the confidence calibration (ranker.calibration) was fitted on; bare z-scores
would put them on another scale and make its probabilities meaningless.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

KNOWN_COLUMN = "fam_hints_known"
COSINE_COLUMN = "base_cos_joined"


def _z(scores: np.ndarray) -> np.ndarray:
    """Scores standardised within their row (a constant row becomes zeros)."""
    return (scores - scores.mean()) / (scores.std() + 1e-9)


def blend_towards_cosine(learned: np.ndarray, cosine: np.ndarray, known: float) -> np.ndarray:
    """One row's final scores: the learned scores plus the cosines weighted by the unseen share,
    in the learned scores' units (see the module docstring)."""
    learned = np.asarray(learned, dtype=np.float64)
    weight = 1.0 - min(max(float(known), 0.0), 1.0)
    if weight == 0.0 or len(learned) < 2:
        return learned  # the training vocabulary: LightGBM's scores exactly as they were
    return learned + weight * (learned.std() + 1e-9) * _z(np.asarray(cosine, dtype=np.float64))


def blend_rows(learned: Sequence[np.ndarray], cosine: np.ndarray, known: np.ndarray) -> list[np.ndarray]:
    """`blend_towards_cosine` for consecutive rows; `cosine` and `known` hold one value per
    (query, option) in the same order as the concatenated `learned` scores."""
    out, start = [], 0
    for scores in learned:
        end = start + len(scores)
        out.append(blend_towards_cosine(scores, cosine[start:end], known[start] if end > start else 1.0))
        start = end
    return out
