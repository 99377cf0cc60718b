"""Several LightGBM boosters of one recipe, differing only in their seed, scoring by their mean.

Why a bag rather than one booster: each tree of the learned ranker sees a random
subset of the feature columns (`colsample_bytree`, by default the square root of their number, as
random forests do). One booster built that way still leans on whichever columns its seed happened
to favour, and on a vocabulary it never saw that choice decides a few first places either way
(docs/experiments/transfer.md). The mean of several such boosters
spreads the weight over every group of columns - base encoder, fine-tuned encoder, association
tables - so a shift in one group (the fine-tuned encoder misreading names) moves the ranking
less, and the model no longer depends on one seed's luck.

The mean of the boosters' scores is itself an additive model, so its SHAP contributions
(`pred_contrib`) are the mean of theirs and still add up to the score.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from pictorank.errors import ModelError

if TYPE_CHECKING:  # lightgbm pulls in scikit-learn and scipy (slow); seed and cosine never need it
    import lightgbm as lgb

BOOSTER_FILE = "model-{}.txt"  # one LightGBM text file per booster, numbered from 0


class BoosterBag:
    """LightGBM boosters over the same feature columns, whose scores are averaged.

    Parameters
    ----------
    boosters : fitted lightgbm Boosters (at least one), all reading the same columns in the same order.
    """

    def __init__(self, boosters: Sequence["lgb.Booster"]) -> None:
        if not boosters:
            raise ModelError("a booster bag needs at least one booster")
        names = list(boosters[0].feature_name())
        if any(list(b.feature_name()) != names for b in boosters[1:]):
            raise ModelError("the bag's boosters read different feature columns")
        self.boosters = list(boosters)

    def __len__(self) -> int:
        return len(self.boosters)

    def feature_name(self) -> list[str]:
        return list(self.boosters[0].feature_name())

    def predict(self, table: np.ndarray, num_threads: int = 1, pred_contrib: bool = False) -> np.ndarray:
        """The boosters' mean score of each row (or, with `pred_contrib`, their mean SHAP
        contributions: one column per feature plus the bias, summing to the mean score)."""
        total = sum(b.predict(table, num_threads=num_threads, pred_contrib=pred_contrib) for b in self.boosters)
        return np.asarray(total) / len(self.boosters)

    def model_to_string(self) -> str:
        """Every booster's text, in order (two runs of one recipe give the same string)."""
        return "\n".join(b.model_to_string() for b in self.boosters)

    def file_names(self) -> list[str]:
        return [BOOSTER_FILE.format(i) for i in range(len(self.boosters))]

    def save(self, directory: Path) -> None:
        """One LightGBM text file per booster (`file_names`), readable by LightGBM itself."""
        for booster, name in zip(self.boosters, self.file_names()):
            booster.save_model(str(directory / name))

    @classmethod
    def load(cls, directory: Path, count: int) -> "BoosterBag":
        """The `count` boosters saved in `directory`."""
        return cls([_load_booster(directory / BOOSTER_FILE.format(i)) for i in range(count)])


def _load_booster(path: Path) -> "lgb.Booster":
    import lightgbm as lgb  # lazy: see TYPE_CHECKING above

    try:
        return lgb.Booster(model_file=str(path))
    except (lgb.basic.LightGBMError, OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read the LightGBM model ({exc})") from None
