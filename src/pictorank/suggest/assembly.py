"""The clue-giver put together: its clue model fitted on training puzzles, the guesser its clues
must convince, and the reader, all over the encoders of one served model.

The one place the command line (`pictorank suggest`, `evaluate-suggest`), the service (POST
/suggest) and `pictorank train` build it: for one model folder, training puzzles and hints they
fit (or read back) the same clue model in the same encoder space, so they give the same clues.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from pictorank.encoders import Encoder, Encoders
from pictorank.errors import DataError, ModelError
from pictorank.puzzles import HintVocabulary, load_hints, load_puzzles, to_queries
from pictorank.query import Query
from pictorank.ranker import Ranker, SeedRanker
from pictorank.ranker.registry import serving_encoders
from pictorank.settings import CommonSettings
from pictorank.suggest.model import ClueModel, fit_or_load, fitted_key
from pictorank.suggest.suggester import WIN_BONUS, Suggester


def training_clues(train: str | os.PathLike, vocab: HintVocabulary) -> list[Query]:
    """The human clues of a training file, as queries with answers; a file without answers is a
    DataError naming it."""
    puzzles = load_puzzles(train, vocab)
    if not puzzles or any(p.answer is None for p in puzzles):
        raise DataError(train, None, "answer", "the clue-giver needs puzzles with answers (a train file)")
    return to_queries(puzzles, vocab)


def fit_clue_model(clues: Sequence[Query], vocab: HintVocabulary, encoders: Encoders, cache_dir: Path | None,
                   model_dir: Path | None = None, fit_with: Encoder | None = None,
                   fit_elsewhere: Callable[[], None] | None = None) -> ClueModel:
    """The clue model of `clues` in the base encoder's space: read back from `model_dir` (where
    `pictorank train` leaves it) or the cache when that fit is there, else fitted now (or by
    `fit_elsewhere`, into the cache: `fit_or_load`). `fit_with`: the encoder to encode through
    while fitting, when it must be shared (a service's LockedEncoder over the same base encoder).
    A fit the puzzles cannot support is a ModelError."""
    try:
        return fit_or_load(clues, list(vocab.descriptions.values()), fit_with or encoders.base, cache_dir,
                           shipped=model_dir, fit_elsewhere=fit_elsewhere)
    except ValueError as exc:
        raise ModelError(str(exc)) from None


def build_suggester(model: ClueModel, vocab: HintVocabulary, encoders: Encoders, guesser: Ranker | None = None,
                    win_bonus: float = WIN_BONUS, reader: Encoder | None = None) -> Suggester:
    """The suggester over `model`: its clues must win `guesser` (by default the task's seed baseline
    over the base encoder), and `reader` (by default the model's fine-tuned encoder, if any) judges
    how well each reads as the word."""
    return Suggester(model, vocab, guesser or SeedRanker(encoders.base), encoders.base, win_bonus=win_bonus,
                     reader=reader if reader is not None else encoders.finetuned)


def assemble_suggester(clues: Sequence[Query], vocab: HintVocabulary, encoders: Encoders, cache_dir: Path | None,
                       model_dir: Path | None = None, guesser: Ranker | None = None, reader: Encoder | None = None,
                       win_bonus: float = WIN_BONUS, fit_with: Encoder | None = None,
                       fit_elsewhere: Callable[[], None] | None = None) -> Suggester:
    """The clue-giver of a model folder, as `pictorank suggest` and POST /suggest both build it:
    the clue model of `clues` (read back from `model_dir` or the cache, else fitted:
    `fit_clue_model`), the guesser its clues must win (by default the task's seed baseline over
    the base encoder) and the reader (by default the model's fine-tuned encoder, if any)."""
    model = fit_clue_model(clues, vocab, encoders, cache_dir, model_dir, fit_with, fit_elsewhere)
    return build_suggester(model, vocab, encoders, guesser, win_bonus, reader)


def fit_into_cache(model_dir: Path | None, train: Path, hints: Path, settings: CommonSettings,
                   encoder_id: str) -> bool:
    """Fit the clue model a service of `model_dir` asks for and leave it in the settings' cache,
    where the service reads it back: run in a child process (`pictorank.api.clues`), so the
    training stack that fitting imports leaves with the process. False, with nothing fitted, when
    these settings build another base encoder than the service's `encoder_id` (a fit is made for
    one encoder: `fitted_key`)."""
    encoders = serving_encoders(model_dir, settings)
    if encoders.base.model_id != encoder_id:
        return False
    vocab = load_hints(hints)
    fit_clue_model(training_clues(train, vocab), vocab, encoders, settings.cache_dir, model_dir)
    return True


def fit_for_serving(model_dir: Path, train: Path, hints: Path, settings: CommonSettings) -> ClueModel:
    """Fit the clue model a service of `model_dir` (with these hints and training puzzles) will
    ask for, and keep it in `model_dir` beside the ranker (and in the cache).

    `pictorank train` calls this, so that a service of the new model answers /suggest seconds
    after it starts instead of fitting first, wherever the model folder is copied or mounted.
    The saved fit records the sha256 of its files: a copy damaged on the way is refused, with
    an error in the service's log, and the service fits its own (see `fit_or_load`).
    """
    vocab = load_hints(hints)
    encoders = serving_encoders(model_dir, settings)
    clues = training_clues(train, vocab)
    model = fit_clue_model(clues, vocab, encoders, settings.cache_dir, model_dir)
    model.save(model_dir, fitted_key(model, clues, list(vocab.descriptions.values())))
    for encoder in encoders.all():
        encoder.flush()
    return model
