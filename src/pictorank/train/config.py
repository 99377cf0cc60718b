"""Every knob of a training run, in one frozen dataclass stored with the model."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from pictorank.errors import UsageError
from pictorank.features.cosine import seed_names
from pictorank.encoders import DEFAULT_QUANTIZATION, Quantization
from pictorank.train.finetune import PRECISIONS, FinetuneParams

Log = Callable[[str], None]  # where training reports progress (print, or nothing with --quiet)

MIN_ANSWERS = 2  # out-of-fold features hold answers out: with one answer there is nothing to hold out
ROWS_PER_LEAF = 20  # on a small table a leaf needs at most 1/20 of the option rows (see `sized_for`)

# The seed template's columns are left out by default: the template is a clue's costliest
# string (far more tokens than the joined text), so without them a new clue costs much less
# encoder time, and on val they are worth next to nothing (bench/runtime.py, the README's speed
# section; docs/experiments/speed.md).
SEED_COLUMNS: tuple[str, ...] = tuple(n for space in ("base", "ft") for n in seed_names(space))

DEFAULT_GRID: tuple[dict[str, Any], ...] = (
    {"num_leaves": 4, "min_child_samples": 50, "learning_rate": 0.05},
    {"num_leaves": 7, "min_child_samples": 20, "learning_rate": 0.05},
    {"num_leaves": 15, "min_child_samples": 50, "learning_rate": 0.05},
    {"num_leaves": 31, "min_child_samples": 50, "learning_rate": 0.05},
)


@dataclass(frozen=True)
class TrainConfig:
    """Every knob of a training run; stored in the model directory's metadata.

    folds : OOF folds (grouped by answer) for the features of the rows LightGBM learns from; one
        fold encoder each. Two rank as three did, with options and in open play, in a train CV
        nested around the whole recipe (bench/inner_folds.py), for one fine-tune, one lexicon pass
        and two tables less; the train-CV estimate is then a two-fold one (docs/learned-ranker.md).
    finetune : False skips fine-tuning: the ``ft_*`` columns then repeat the base encoder.
    oof_epochs / final_epochs : fine-tuning epochs of each fold's encoder / of the final one.
        The fold encoders are shorter (they are thrown away) to keep training under 15 minutes.
    finetune_precision : "bf16" (mixed precision: the forward passes' matrix products in bfloat16,
        weights and optimiser in fp32) or "fp32". bf16 is the faster where the CPU has bfloat16
        instructions, with the same train-CV estimate (docs/experiments/speed.md); on a CPU
        without them fp32 may be the faster.
    drop_groups : feature prefixes left out (ablations), e.g. ("ft_",) or ("lex_",); by default
        the seed template's columns (SEED_COLUMNS).
    unfamiliar_groups : besides the OOF rows, every train clue is built once more as it would
        look far from home (pictorank.train.oof.unfamiliar_features): its answer kind held out
        of a fold's encoder and tables, a share of the descriptions unknown, options of that
        kind. The answer kinds (k-means clusters of the answers, `answer_kinds` of them) are
        dealt into this many groups, each held out once (one more fine-tuned encoder each);
        0 leaves these rows out.
    hidden_descriptions : share of the train descriptions the unfamiliar rows' tables forget.
    cv_folds / grid : the LightGBM settings compared by grouped CV on the OOF train table (folds by
        answer); the simplest within one standard error of the best is taken.
    n_estimators / early_stopping_rounds : the most trees a CV fold's booster may grow, and how
        long it goes on without a better held-out MRR; the final boosters get the median of the
        chosen setting's stopping points (pictorank.train.lambdamart). Val stops nothing.
    bag : how many LightGBM boosters (seeds `seed`, `seed` + 1, ...) are fitted on all of train and
        averaged (pictorank.ranker.bag), each with the trees the CV chose.
    colsample_bytree : the share of the feature columns each tree may split on; "sqrt" is the
        square root of their number (9 of 83), as random forests choose: with the bag, no group of
        columns carries the model alone (pictorank.ranker.bag says why that matters far from home).
    fallback : the trained ranker blends its scores towards plain cosine by the share of a
        clue's descriptions train never saw (pictorank.ranker.fallback).
    quantization : how the saved model's encoders are exported to ONNX for inference (a
        Quantization, or its text such as 'int8' or 'base=int8,ft=int8-ffn'; None: no export, the
        model runs on PyTorch); see pictorank.ranker.shipped.
    """

    folds: int = 2
    finetune: bool = True
    oof_epochs: float = 1.0
    final_epochs: float = 3.0
    batch_size: int = 32
    learning_rate: float = 1e-4  # see FinetuneParams
    hard_negatives: int = 1
    finetune_precision: str = "bf16"
    seed: int = 13
    cv_folds: int = 2
    grid: tuple[dict[str, Any], ...] = DEFAULT_GRID
    n_estimators: int = 600
    early_stopping_rounds: int = 50
    num_threads: int = 2
    drop_groups: tuple[str, ...] = SEED_COLUMNS
    unfamiliar_groups: int = 2
    answer_kinds: int = 8
    hidden_descriptions: float = 0.5
    bag: int = 10
    colsample_bytree: float | str = "sqrt"
    fallback: bool = True
    quantization: Quantization | str | None = DEFAULT_QUANTIZATION

    def __post_init__(self) -> None:
        if isinstance(self.quantization, str):  # frozen: set through object.__setattr__
            object.__setattr__(self, "quantization", Quantization.parse(self.quantization))
        # checked here, before minutes of fine-tuning, rather than when LightGBM first meets them
        if self.bag < 1:
            raise UsageError(f"bag must be at least 1 booster, found {self.bag}")
        if self.finetune_precision not in PRECISIONS:
            raise UsageError(f"finetune_precision must be one of {', '.join(PRECISIONS)}, found {self.finetune_precision!r}")
        share = self.colsample_bytree
        if share != "sqrt" and (isinstance(share, str) or not 0.0 < share <= 1.0):
            raise UsageError(f"colsample_bytree must be 'sqrt' or a share in (0, 1], found {share!r}")

    def finetune_params(self, epochs: float) -> FinetuneParams:
        return FinetuneParams(
            epochs=epochs,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            hard_negatives=self.hard_negatives,
            seed=self.seed,
            precision=self.finetune_precision,
        )

    def sized_for(self, answers: int, option_rows: int) -> tuple["TrainConfig", list[str]]:
        """This recipe fitted to a training set of `answers` distinct answers and `option_rows`
        (clue, option) rows, and one note per change (the log says what was scaled down).

        Folds are grouped by answer, so there are at most as many folds as answers, and the
        LightGBM CV splits those folds (at most `folds` of them). A leaf may need no more than
        1/ROWS_PER_LEAF of the rows: on a tiny table, min_child_samples=50 would allow no split
        at all and every option would score the same. Bliss-sized sets are left as they are.
        Fewer than MIN_ANSWERS answers cannot be trained on: the caller raises (pipeline).
        """
        notes: list[str] = []
        folds = min(self.folds, answers)
        if folds != self.folds:
            notes.append(f"{folds} out-of-fold folds instead of {self.folds} (only {answers} different answers)")
        cv_folds = min(self.cv_folds, folds)
        if cv_folds != self.cv_folds:
            notes.append(f"{cv_folds} CV folds instead of {self.cv_folds}")
        cap = max(1, option_rows // ROWS_PER_LEAF)
        grid = tuple({**g, "min_child_samples": min(int(g.get("min_child_samples", 20)), cap)} for g in self.grid)
        if grid != self.grid:
            notes.append(f"LightGBM min_child_samples at most {cap} ({option_rows} option rows)")
        return replace(self, folds=folds, cv_folds=cv_folds, grid=grid), notes

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["grid"] = [dict(g) for g in self.grid]
        out["drop_groups"] = list(self.drop_groups)
        out["quantization"] = None if self.quantization is None else str(self.quantization)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        values = dict(values)
        values["grid"] = tuple(dict(g) for g in values.get("grid", DEFAULT_GRID))
        values["drop_groups"] = tuple(values.get("drop_groups", ()))
        values.setdefault("finetune_precision", "fp32")  # what every model saved before the knob was trained with
        return cls(**values)
