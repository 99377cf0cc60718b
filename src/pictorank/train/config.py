"""Every knob of a training run, in one frozen dataclass stored with the model."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable

from pictorank.train.finetune import FinetuneParams

Log = Callable[[str], None]  # where training reports progress (print, or nothing with --quiet)

DEFAULT_GRID: tuple[dict[str, Any], ...] = (
    {"num_leaves": 4, "min_child_samples": 50, "learning_rate": 0.05},
    {"num_leaves": 7, "min_child_samples": 20, "learning_rate": 0.05},
    {"num_leaves": 15, "min_child_samples": 50, "learning_rate": 0.05},
    {"num_leaves": 31, "min_child_samples": 50, "learning_rate": 0.05},
)


@dataclass(frozen=True)
class TrainConfig:
    """Every knob of a training run; stored in the model directory's metadata.

    folds : OOF folds (grouped by answer) for the features of the rows LightGBM learns from.
    finetune : False skips fine-tuning: the ``ft_*`` columns then repeat the base encoder.
    oof_epochs / final_epochs : fine-tuning epochs of each fold's encoder / of the final one.
        The fold encoders are shorter (they are thrown away) to keep training under 15 minutes.
    drop_groups : feature prefixes left out (ablations), e.g. ("ft_",) or ("lex_",).
    """

    folds: int = 3
    finetune: bool = True
    oof_epochs: float = 1.0
    final_epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 1e-4  # see FinetuneParams
    hard_negatives: int = 1
    seed: int = 13
    cv_folds: int = 3
    grid: tuple[dict[str, Any], ...] = DEFAULT_GRID
    n_estimators: int = 600
    early_stopping_rounds: int = 50
    num_threads: int = 2
    drop_groups: tuple[str, ...] = ()

    def finetune_params(self, epochs: float) -> FinetuneParams:
        return FinetuneParams(
            epochs=epochs,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            hard_negatives=self.hard_negatives,
            seed=self.seed,
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["grid"] = [dict(g) for g in self.grid]
        out["drop_groups"] = list(self.drop_groups)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        values = dict(values)
        values["grid"] = tuple(dict(g) for g in values.get("grid", DEFAULT_GRID))
        values["drop_groups"] = tuple(values.get("drop_groups", ()))
        return cls(**values)
