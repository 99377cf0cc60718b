"""Training the learned ranker: its knobs (`config`), encoder fine-tuning (`finetune`),
out-of-fold feature tables (`oof`), LambdaMART with every choice by CV on train (`lambdamart`),
the train-CV estimate (`estimate`), open play's ranker (`open_play`) and the whole run, stage by
stage (`pipeline`)."""

from pictorank.train.config import TrainConfig
from pictorank.train.oof import TrainingTables, build_tables
from pictorank.train.pipeline import TrainingFiles, fit_learned_ranker, fit_ranker_from_tables, train_command, train_model

__all__ = ["TrainConfig", "TrainingFiles", "TrainingTables", "build_tables", "fit_learned_ranker", "fit_ranker_from_tables",
           "train_command", "train_model"]
