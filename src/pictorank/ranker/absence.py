"""How likely it is that the word a player means is *none* of the options they typed.

A ranker's confidence (pictorank.ranker.calibration) is the probability that its first option is
the answer *given that the answer is among the options*, as it always is in a puzzle. A player of
Ask mode types the options themselves, and may leave their word out; then a confident ranking
is confidently wrong. `none_of_these` estimates that chance from how well the best options fit
the clue at all: a logistic model over the cosine similarities of the options to the clue's
joined text in the base encoder's space (the same for every served method, so one model serves
seed, cosine and learned rankers alike):

    top similarity, its margin over the second, the mean similarity, log(number of options)

It is fitted on the Bliss train puzzles only, each twice: with its options as given (label 0)
and with the answer removed (label 1), so it answers as if a player left the word out half the
time (scripts/fit_none_of_these.py; figures in docs/experiments/none-of-these.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pictorank.encoders import Encoder
from pictorank.errors import ModelError
from pictorank.query import Query, joined_text

FEATURES = ("top", "margin", "mean", "log_options")
SHIPPED_FILE = Path(__file__).resolve().parent / "calibrations" / "none_of_these.json"


def absence_features(similarities: Sequence[float]) -> list[float]:
    """The model's inputs from the options' similarities to the clue, in any order."""
    ordered = sorted((float(s) for s in similarities), reverse=True)
    margin = ordered[0] - ordered[1] if len(ordered) > 1 else 0.0
    return [ordered[0], margin, float(np.mean(ordered)), math.log(len(ordered))]


def clue_similarities(encoder: Encoder, queries: Sequence[Query]) -> list[np.ndarray]:
    """Each query's options' cosine similarities to its joined hints (one encoder call for all)."""
    clues = [joined_text(q.hints) for q in queries]
    encoder.encode(list(dict.fromkeys([*clues, *(o for q in queries for o in q.options)])))
    return [encoder.encode(list(q.options)) @ encoder.encode([clue])[0] for q, clue in zip(queries, clues)]


@dataclass(frozen=True)
class AbsenceModel:
    """P(the word is none of the options) = sigmoid(intercept + coef . absence_features)."""

    coef: tuple[float, ...]
    intercept: float
    fitted_on: str = ""
    rows: int = 0

    def probability(self, similarities: Sequence[float]) -> float | None:
        """The probability for one clue's options; None without options."""
        if len(similarities) == 0:
            return None
        z = self.intercept + sum(c * x for c, x in zip(self.coef, absence_features(similarities)))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z)))) if math.isfinite(z) else None

    def to_json(self) -> dict[str, Any]:
        return {"kind": "logistic", "features": list(FEATURES), "coef": list(self.coef),
                "intercept": self.intercept, "fitted_on": self.fitted_on, "rows": self.rows}

    @classmethod
    def load(cls, path: Path = SHIPPED_FILE) -> "AbsenceModel":
        """The model `to_json` wrote; anything else is a ModelError naming `path`."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data["kind"] != "logistic" or list(data["features"]) != list(FEATURES):
                raise ValueError(f"kind {data['kind']!r} with features {data['features']!r}")
            coef = tuple(float(c) for c in data["coef"])
            intercept = float(data["intercept"])
            if len(coef) != len(FEATURES) or not all(math.isfinite(v) for v in (*coef, intercept)):
                raise ValueError(f"coef must be {len(FEATURES)} finite numbers and intercept finite")
            return cls(coef, intercept, str(data.get("fitted_on", "")), int(data.get("rows", 0)))
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"{path}: invalid none-of-these model ({type(exc).__name__}: {exc})") from None
