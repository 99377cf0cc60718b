"""How sure a ranking is: the probability that its first option is the answer.

A ranker's scores say which option is likeliest, not how likely it is; the same top score means
more with 4 options than with 30, and a wide margin over the runner-up means more than a narrow
one. So the probability is a logistic (Platt) model over three numbers of a finished ranking:

    top score, margin of the top score over the second, log(number of options)

fitted on rankings whose outcome is known and that the ranker did not learn from (for the
learned ranker: out-of-fold CV scores of the training rows, see pictorank.train.calibrate; for
`seed` and `cosine`, which learn nothing: the bundled train set, shipped in `calibrations/`).

Applying it is three multiplications, so every ranking carries it at no measurable cost. It is
only valid for rankings like the ones it was fitted on (given options, up to 30 of them):
open-vocabulary rankings get no confidence.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pictorank.errors import ModelError

CALIBRATION_FILE = "calibration.json"  # in a learned model directory
FEATURES = ("top", "margin", "log_options")
SHIPPED_DIR = Path(__file__).resolve().parent / "calibrations"  # <method>.json for seed and cosine


def ranking_features(scores: Sequence[float]) -> list[float]:
    """The calibrator's inputs from a ranking's scores, best first (one option: margin 0)."""
    top = float(scores[0])
    margin = top - float(scores[1]) if len(scores) > 1 else 0.0
    return [top, margin, math.log(len(scores))]


@dataclass(frozen=True)
class Calibrator:
    """P(first option is the answer) = sigmoid(intercept + coef . ranking_features(scores)).

    `fitted_on` records which rankings it was fitted on, `rows` how many, `accuracy` their share
    of right first options: a reader of the JSON can tell what the probabilities mean.
    """

    coef: tuple[float, float, float]
    intercept: float
    fitted_on: str = ""
    rows: int = 0
    accuracy: float | None = None

    def probability(self, scores: Sequence[float]) -> float | None:
        """The calibrated probability for a ranking's scores, best first; None without scores.
        One option is the answer for certain (the answer is always among the options): 1, not
        what the fit says of a margin of 0 among 1 option, which it never saw (0.6)."""
        if len(scores) == 0:
            return None
        if len(scores) == 1:
            return 1.0
        z = self.intercept + sum(c * x for c, x in zip(self.coef, ranking_features(scores)))
        if not math.isfinite(z):
            return None
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def probability_of(self, scores: Sequence[float], chosen: int) -> float | None:
        """The calibrated probability that option `chosen` is the answer, from one expert's scores
        of all options in any order: its score, its margin over the best other option (negative
        when this expert prefers another) and the number of options. For the expert's own first
        choice it equals `probability` of the sorted scores."""
        if len(scores) <= 1:
            return self.probability(scores)
        others = [float(s) for i, s in enumerate(scores) if i != chosen]
        top = float(scores[chosen])
        runner_up = max(others) if others else top
        return self.probability([top, runner_up, *[runner_up] * (len(scores) - 2)])

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "platt", "features": list(FEATURES), "coef": list(self.coef), "intercept": self.intercept,
            "fitted_on": self.fitted_on, "rows": self.rows, "accuracy": self.accuracy,
        }

    @classmethod
    def from_json(cls, data: Any, where: str | Path) -> "Calibrator":
        """The calibrator `to_json` wrote; anything else is a ModelError naming `where`."""
        try:
            if data["kind"] != "platt" or list(data["features"]) != list(FEATURES):
                raise ValueError(f"kind {data['kind']!r} with features {data['features']!r}")
            coef = tuple(float(c) for c in data["coef"])
            intercept = float(data["intercept"])
            if len(coef) != len(FEATURES) or not all(math.isfinite(v) for v in (*coef, intercept)):
                raise ValueError("coef must be three finite numbers and intercept finite")
            accuracy = data.get("accuracy")
            return cls(coef, intercept, str(data.get("fitted_on", "")), int(data.get("rows", 0)),  # type: ignore[arg-type]
                       None if accuracy is None else float(accuracy))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"{where}: invalid calibration ({type(exc).__name__}: {exc})") from None

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "Calibrator":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ModelError(f"{path}: missing or corrupt ({exc})") from None
        return cls.from_json(data, path)


def shipped_calibrator(method: str) -> Calibrator | None:
    """The calibration shipped with the package for an unlearned method, or None if there is none."""
    path = SHIPPED_DIR / f"{method}.json"
    return Calibrator.load(path) if path.is_file() else None
