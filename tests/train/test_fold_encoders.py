"""The fold encoders: which fine-tunes a run makes, and making them in a process of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import WordHashModel
from pictorank.encoders import Encoder, base_model_version
from pictorank.errors import PictorankError
from pictorank.puzzles import to_queries
from pictorank.query import Query
from pictorank.train import TrainConfig, build_tables
from pictorank.train import oof
from pictorank.train.finetune import weights_digest
from pictorank.train.fold_encoders import encoder_trainings, finetune_ahead, finetuned_encoder

QUIET = lambda message: None  # noqa: E731
TINY = dict(folds=2, cv_folds=2, unfamiliar_groups=2, answer_kinds=4, oof_epochs=0.25, final_epochs=0.25,
            n_estimators=20, early_stopping_rounds=5, bag=1, quantization=None)


def test_the_listed_trainings_are_the_fine_tunes_the_tables_make(vocab, train_puzzles, monkeypatch):
    """`encoder_trainings` (what the fine-tuning process makes ahead) lists exactly the clues and
    epochs that building the tables asks `finetuned_encoder` for: otherwise the process would
    fine-tune encoders nobody reads, and the tables would fine-tune theirs again."""
    words = Encoder(model=WordHashModel(dimension=16), model_id="word-hash-fold-encoders")
    train = to_queries(train_puzzles[:120], vocab)
    config = TrainConfig(**TINY)
    asked: list[tuple[list[Query], float]] = []

    def record(queries, epochs, config, cache_dir, log):
        asked.append((list(queries), epochs))
        return None, words, False

    monkeypatch.setattr(oof, "finetuned_encoder", record)
    build_tables(train, words, config, QUIET)
    listed = encoder_trainings(train, config, words)
    assert len(listed) == config.folds + config.unfamiliar_groups + 1
    assert listed == asked
    assert listed[-1] == (train, config.final_epochs)
    assert encoder_trainings(train, TrainConfig(**{**TINY, "finetune": False}), words) == []


def test_nothing_is_fine_tuned_ahead_where_a_process_cannot_help(tmp_path, vocab, train_puzzles):
    train = to_queries(train_puzzles[:20], vocab)
    config = TrainConfig(**TINY)
    custom = Encoder(model=WordHashModel(dimension=16), model_id="word-hash-fold-encoders", cache_dir=tmp_path)
    assert not finetune_ahead(train, config, custom, QUIET)  # the process could not rebuild it
    assert not finetune_ahead(train, config, Encoder(), QUIET)  # no cache to hand the weights over
    assert not finetune_ahead(train, TrainConfig(**{**TINY, "finetune": False}), Encoder(cache_dir=tmp_path), QUIET)
    assert not (tmp_path / "finetuned").exists()


def test_a_failing_fine_tuning_process_is_one_error_with_what_it_raised(tmp_path):
    odd = [Query(("sun",), ("a", "b"), "a"), Query(("sun",), ("a", "b"), 7)]  # answers that do not sort
    with pytest.raises(PictorankError, match="fine-tuning failed: TypeError"):
        finetune_ahead(odd, TrainConfig(**TINY), Encoder(cache_dir=tmp_path), QUIET)


@pytest.mark.slow
def test_encoders_fine_tuned_ahead_are_the_ones_fine_tuned_here(tmp_path, base_model, vocab, train_puzzles):
    """The process fine-tunes every encoder into the cache, with the weights this process would
    give them; each is then read back from there, as building the tables reads it."""
    train = to_queries(train_puzzles[:60], vocab)
    config = TrainConfig(**{**TINY, "unfamiliar_groups": 0})
    logged: list[str] = []
    assert finetune_ahead(train, config, Encoder(cache_dir=tmp_path), logged.append)
    assert any("fine-tuned 0.25 epoch(s) on 60 clues" in line for line in logged)
    stored = sorted((tmp_path / "finetuned").iterdir())
    assert len(stored) == config.folds + 1
    trainings = encoder_trainings(train, config, Encoder(model=base_model, model_id=base_model_version()))
    inside, epochs = trainings[0]
    here, _, reused = finetuned_encoder(inside, epochs, config, None, QUIET)
    assert not reused
    read_back = [finetuned_encoder(clues, epochs, config, tmp_path, QUIET) for clues, epochs in trainings]
    assert all(reused for _, _, reused in read_back)
    assert weights_digest(here) == weights_digest(read_back[0][0])
