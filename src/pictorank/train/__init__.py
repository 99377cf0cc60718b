"""Training the learned ranker: its knobs (`config`), encoder fine-tuning (`finetune`),
out-of-fold feature tables (`oof`), LambdaMART with every choice by CV on train (`lambdamart`),
the train-CV estimate (`estimate`) and the whole run (`pipeline`)."""

from pictorank.train.config import TrainConfig
from pictorank.train.oof import TrainingTables, build_tables
from pictorank.train.pipeline import fit_learned_ranker, fit_ranker_from_tables, train_command

__all__ = ["TrainConfig", "TrainingTables", "build_tables", "fit_learned_ranker", "fit_ranker_from_tables", "train_command"]
