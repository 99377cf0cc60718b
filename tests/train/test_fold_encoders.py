"""The fold encoders: which fine-tunes a run makes, and making them in a process of their own."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from helpers import WordHashModel
from pictorank.encoders import Encoder, base_model_version
from pictorank.errors import PictorankError
from pictorank.puzzles import to_queries
from pictorank.query import Query
from pictorank.train import TrainConfig, build_tables
from pictorank.train import oof
from pictorank.train.finetune import weights_digest
from pictorank.train.fold_encoders import Exported, encoder_trainings, finetune_ahead, finetuned_encoder

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


@pytest.fixture(scope="module")
def ahead(tmp_path_factory, vocab, train_puzzles):
    """One run of the fine-tuning process over 60 train clues, with exports to serve (int8) and the
    lexicon (a small one: 50 of their options) embedded meanwhile by `embed_ahead`: its cache
    folder, config, clues, log, the exports it announced and the lexicon."""
    from pictorank.encoders import Quantization
    from pictorank.lexicon import Lexicon
    from pictorank.train import pipeline

    cache = tmp_path_factory.mktemp("ahead")
    train = to_queries(train_puzzles[:60], vocab)
    config = TrainConfig(**{**TINY, "unfamiliar_groups": 0, "quantization": Quantization.parse("int8")})
    words = sorted({w for q in train for w in q.options})[:50]
    small = Lexicon(tuple(words), np.full(len(words), 3.0, np.float32), "wordnet")
    logged: list[str] = []
    announced: list[Exported] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pipeline, "load_lexicon", lambda name: small)
        patch.setattr(pipeline, "lexicon_with_data", lambda name, files: small)
        embed = pipeline.embed_ahead("wordnet", [], cache, QUIET)

        def meanwhile(exported: Exported) -> None:
            announced.append(exported)
            embed(exported)

        assert finetune_ahead(train, config, Encoder(cache_dir=cache), logged.append, meanwhile)
    return cache, config, train, logged, announced, small


@pytest.mark.slow
def test_encoders_fine_tuned_ahead_are_the_ones_fine_tuned_here(ahead, base_model):
    """The process fine-tunes every encoder into the cache, with the weights this process would
    give them; each is then read back from there, as building the tables reads it."""
    cache, config, train, logged, _, _ = ahead
    assert any("fine-tuned 0.25 epoch(s) on 60 clues" in line for line in logged)
    stored = sorted((cache / "finetuned").iterdir())
    assert len(stored) == config.folds + 1
    trainings = encoder_trainings(train, config, Encoder(model=base_model, model_id=base_model_version()))
    inside, epochs = trainings[0]
    here, _, reused = finetuned_encoder(inside, epochs, replace(config, quantization=None), None, QUIET)
    assert not reused
    read_back = [finetuned_encoder(clues, epochs, config, cache, QUIET) for clues, epochs in trainings]
    assert all(reused for _, _, reused in read_back)
    assert weights_digest(here) == weights_digest(read_back[0][0])


@pytest.mark.slow
def test_while_it_fine_tunes_the_lexicon_is_embedded_ahead_with_each_announced_export(ahead, base_model):
    """With exports to serve and work to do meanwhile, the process exports the base model first and
    announces it and each fold encoder; `embed_ahead` embeds the lexicon with them into the cache,
    where the later stages read the very vectors they would have made."""
    from pictorank.lexicon import store
    from pictorank.lexicon.glosses import gloss_of, read_glosses

    cache, config, train, _, announced, small = ahead
    assert [e.role for e in announced] == ["base"] + ["fold"] * config.folds
    glossed = any(gloss_of(w, read_glosses()) is not None for w in small.words)
    ahead_files = sorted((cache / store.CACHE_FOLDER).glob("*.npz"))  # base words, glosses, each fold's words
    assert len(ahead_files) == 1 + glossed + len({e.model_id for e in announced[1:]})
    trainings = encoder_trainings(train, config, Encoder(model=base_model, model_id=base_model_version()))
    for exported, (clues, epochs) in zip(announced[1:], trainings):
        _, served, reused = finetuned_encoder(clues, epochs, config, cache, QUIET)  # as open play's folds get it
        assert reused and served.model_id.startswith(exported.model_id)
        read = store.embedded(served, small.words)  # read back from the cache
        fresh = store.embedded(Encoder(model=served.model, model_id=served.model_id), small.words)
        assert np.array_equal(read.codes, fresh.codes) and np.array_equal(read.scales, fresh.scales)
    assert sorted((cache / store.CACHE_FOLDER).glob("*.npz")) == ahead_files  # read back, none embedded again


@pytest.mark.slow
def test_the_unlearned_methods_export_is_made_with_the_base_models(ahead, monkeypatch):
    """The fp32 export the seed and cosine methods are served on is in the cache once the process
    has ended: a command ranking with them after training reads it (no model loaded, no export)."""
    from pictorank.encoders import onnx, runtime

    cache = ahead[0]
    monkeypatch.setattr(onnx, "export_onnx", lambda *args, **kwargs: pytest.fail("exported again"))
    encoder = runtime.method_encoder(Encoder(cache_dir=cache))
    assert encoder.model_id == runtime.runtime_model_id(base_model_version(), "fp32", encoder.model.export_format)
