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
tried too: see README "Transfer").

The blend is expressed in LightGBM's own units (mean and spread of the row's LightGBM scores):
score = LightGBM + (1 - known) * std(LightGBM) * z(cosine). Within a row that is a positive
affine map of the z-score sum, so the order is the same, but a blended row's top score and margin
stay on the scale the confidence calibration (ranker.calibration) was fitted on; bare z-scores
would put them on another scale and make its probabilities meaningless.

How sure a blended row is (`blended_confidence`) follows the same weights: each expert's own
calibrated probability that the blend's first option is the answer (LightGBM's calibration,
fitted on Bliss out-of-fold scores; cosine's, shipped with the package), mixed by the blend
weight. LightGBM's calibration alone believes its Bliss-sized margins on any vocabulary and
overstates the confidence far from home (ELCo dev: docs/experiments/transfer.md).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pictorank.ranker.calibration import Calibrator

KNOWN_COLUMN = "fam_hints_known"
COSINE_COLUMN = "base_cos_joined"


def _z(scores: np.ndarray) -> np.ndarray:
    """Scores standardised within their row (a constant row becomes zeros)."""
    return (scores - scores.mean()) / (scores.std() + 1e-9)


def blend_towards_cosine(learned: np.ndarray, cosine: np.ndarray, known: float) -> np.ndarray:
    """One row's final scores: the learned scores plus the cosines weighted by the unseen share,
    in the learned scores' units (see the module docstring)."""
    learned = np.asarray(learned, dtype=np.float64)
    weight = unseen_weight(known)
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


def unseen_weight(known: float) -> float:
    """The blend's weight on cosine: the share of the clue's descriptions train never saw."""
    return 1.0 - min(max(float(known), 0.0), 1.0)


def blended_confidence(
    learned: np.ndarray, cosine: np.ndarray, known: float, chosen: int,
    learned_calibrator: Calibrator, cosine_calibrator: Calibrator | None,
) -> float | None:
    """P(option `chosen`, the blend's first, is the answer) for one row: LightGBM's and cosine's
    calibrated probabilities for that option, weighted as the blend weighs them (1 : unseen share,
    so equally for a wholly unseen vocabulary). Without a cosine calibration, or for a clue of the
    training vocabulary, LightGBM's alone."""
    weight = unseen_weight(known)
    from_learned = learned_calibrator.probability_of(learned, chosen)
    if weight == 0.0 or cosine_calibrator is None or from_learned is None:
        return from_learned
    from_cosine = cosine_calibrator.probability_of(cosine, chosen)
    if from_cosine is None:
        return from_learned
    return (from_learned + weight * from_cosine) / (1.0 + weight)  # the blend's 1 : weight
