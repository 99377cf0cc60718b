"""How well stated confidences match outcomes: expected calibration error and reliability bins.

A ranking that says "83% sure" should have its first option right in 83% of such rankings.
Binning by stated probability (10 equal-width bins) and comparing each bin's mean probability
with its share of right answers gives the reliability curve; their gap, weighted by the bins'
sizes, is the expected calibration error (ECE).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of stated probabilities: [low, high), how many rankings, their mean probability
    and their share of right first options."""

    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


def reliability_bins(probabilities: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[ReliabilityBin]:
    """The non-empty equal-width bins of `probabilities` (1.0 falls in the last bin)."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    index = np.minimum((p * bins).astype(int), bins - 1)
    found = []
    for k in range(bins):
        inside = index == k
        if inside.any():
            found.append(ReliabilityBin(k / bins, (k + 1) / bins, int(inside.sum()), float(p[inside].mean()),
                                        float(y[inside].mean())))
    return found


def expected_calibration_error(probabilities: Sequence[float], correct: Sequence[bool], bins: int = 10) -> float:
    """Sum over bins of |mean probability - accuracy|, weighted by the bin's share of rankings."""
    total = len(probabilities)
    if total == 0:
        raise ValueError("no probabilities to measure")
    return float(sum(b.count * abs(b.confidence - b.accuracy) for b in reliability_bins(probabilities, correct, bins)) / total)
