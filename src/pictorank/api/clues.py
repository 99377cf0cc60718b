"""The clue-giver behind POST /suggest: a fitted ClueModel and the guesser its clues must convince,
built once per process in the background after start-up (pictorank.api.app), so /ready does not
wait for it. No HTTP here; the route is `pictorank.api.routes.suggest`.

The clue model learns from the service's training puzzles (`PICTORANK_SUGGEST_TRAIN`, by default
the bundled train.csv). Fitting takes minutes (the main-idea tower's fine-tuning most of it),
so it is read back (quick) from the served model's folder, where `pictorank train`
leaves it (`fit_for_serving`, below), or from `<cache_dir>/suggest/` when the same fit was saved
there (the Docker build fits it there for the image's own service); a service whose fit is in
neither (other training puzzles or hints) pays it once. Without training puzzles the rest of the
service works, and /suggest answers 503 with the reason (as the game page does without its
puzzles).

The guesser (`PICTORANK_SUGGEST_GUESSER`):

- `seed` (default): the task's seed baseline over the service's base encoder. Every figure of the
  clue-giver (bench/suggest.py) uses it; it is independent of our own models, so a
  clue is not tuned to their quirks; and it is cheap (one sentence embedding per candidate clue).
- `served`: the ranker the service serves (e.g. the learned model): clues chosen to win against
  exactly the guesser that /rank and the game use; each candidate costs that ranker's features.

When the service serves a learned model with a fine-tuned encoder, that encoder is the suggester's
reader: it judges how well each shortlisted clue reads as the word (more human-like clues, see
pictorank.suggest.suggester), for one more embedding of the word and of each shortlisted clue.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from pictorank.api.service import RankingService, index_encoder
from pictorank.api.settings import Settings
from pictorank.encoder import Encoder
from pictorank.errors import PictorankError
from pictorank.puzzles import load_hints, load_puzzles, to_queries
from pictorank.ranker import SeedRanker, load_ranker
from pictorank.suggest import ClueModel, Suggester, Suggestion, fit_or_load
from pictorank.suggest.model import fitted_key
from pictorank.suggest.rules import check_request
from pictorank.suggest.suggester import fine_tuned_encoder

log = logging.getLogger(__name__)
GUESSERS = ("seed", "served")


@dataclass
class ClueGiver:
    """The service's suggester, or the reason there is none (`error`)."""

    suggester: Suggester | None = None
    service: RankingService | None = None
    guesser: str = "seed"
    error: str | None = None

    def suggest(self, word: str, avoid: Sequence[str], max_length: int, top: int,
                use_known: bool) -> tuple[list[str], bool, list[Suggestion]]:
        """The avoid words judged against (the request's, without repeats or the word itself; or the
        word's nearest train answers when none is left), whether they were the nearest answers, and
        the clues, best first."""
        assert self.suggester is not None and self.service is not None
        # Cleaned as the suggester will clean them ("  cat " is the word "cat"; avoid ["cat"] for
        # "cat" is no avoid word at all), so that the answer names the words really judged against.
        word, avoid = check_request(word, avoid, max_length, top)
        # The encoder's memo and torch are shared with /rank: one user at a time per process.
        with self.service.lock:
            neighbours = not avoid
            if neighbours:
                avoid = self.suggester.hardest_neighbours(word)
            suggestions = self.suggester.suggest(word, list(avoid), max_length=max_length, top=top,
                                                 use_known=use_known)
        return list(avoid), neighbours, suggestions


    def explain(self, word: str, avoid: Sequence[str], hint_ids: Sequence[int]) -> Suggestion:
        """The clue `hint_ids` for `word` as the suggester explains its own (Suggester.explain)."""
        assert self.suggester is not None and self.service is not None
        with self.service.lock:
            return self.suggester.explain(word, list(avoid), hint_ids)


class BuildCancelled(Exception):
    """The service shut down while the clue-giver was being built."""


class LockedEncoder:
    """The service's encoder, used under the service's lock: the clue model is fitted in a
    background thread while /rank uses the same encoder (its memo is not thread-safe). The lock is
    held for one chunk of strings at a time: a fit encodes thousands (seconds of work from an
    empty cache), and a /rank call must never wait for more than one chunk."""

    CHUNK = 32  # strings per lock hold: one encoder batch, tens of milliseconds

    def __init__(self, encoder: Encoder, lock: threading.Lock, stop: threading.Event | None = None) -> None:
        self.encoder = encoder
        self.lock = lock
        self.stop = stop  # set when the service shuts down: the fit gives up at the next chunk

    @property
    def model_id(self) -> str:
        return self.encoder.model_id

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = list(texts)
        parts = []
        for start in range(0, len(texts), self.CHUNK):
            if self.stop is not None and self.stop.is_set():
                raise BuildCancelled("the service is shutting down")
            with self.lock:
                parts.append(self.encoder.encode(texts[start : start + self.CHUNK]))
        if not parts:
            with self.lock:
                return self.encoder.encode(texts)
        return np.concatenate(parts)


def build_clue_giver(settings: Settings, service: RankingService, stop: threading.Event | None = None) -> ClueGiver:
    """Fit (or read from the cache) the clue model on the settings' training puzzles. A problem
    becomes the `error` that /suggest answers with; only `stop`, set, raises BuildCancelled."""
    train = settings.suggest_train
    if train is None:
        return ClueGiver(error="the clue-giver is off: no training puzzles (set PICTORANK_SUGGEST_TRAIN)")
    try:
        puzzles = load_puzzles(train, service.vocab)
        if not puzzles or any(p.answer is None for p in puzzles):
            raise PictorankError(f"{train}: the clue-giver needs puzzles with answers (a train file)")
        model = fit_or_load(to_queries(puzzles, service.vocab), list(service.vocab.descriptions.values()),
                            LockedEncoder(service.encoder, service.lock, stop), settings.cache_dir,
                            shipped=service.model_dir)
    except (PictorankError, ValueError) as exc:  # ValueError: a fit the puzzles cannot support
        log.warning("POST /suggest disabled: %s", exc)
        return ClueGiver(error=f"the clue-giver has no training puzzles: {exc} (set PICTORANK_SUGGEST_TRAIN)")
    guesser = service.ranker if settings.suggest_guesser == "served" else SeedRanker(service.encoder)
    suggester = Suggester(model, service.vocab, guesser, service.encoder, reader=fine_tuned_encoder(service.ranker))
    return ClueGiver(suggester, service, settings.suggest_guesser)


def fit_for_serving(model_dir: Path, train: Path, hints: Path, encoder: Encoder, cache_dir: Path | None) -> ClueModel:
    """Fit the clue model that a service of `model_dir` (with these hints and training puzzles, the
    service's defaults for the bundled data) will look for, and keep it in `model_dir` beside the
    ranker (and in `cache_dir`).

    `pictorank train` calls this, so that `pictorank serve` over the new model answers /suggest
    seconds after start instead of fitting the model then, on this machine or wherever the model
    folder is copied or mounted: the service fits with the model's own base encoder
    (`index_encoder`), whose vectors differ from the PyTorch encoder's that the CLI and the
    benchmarks use, so only this fit has the key the service asks for.
    """
    vocab = load_hints(hints)
    ranker = load_ranker(model_dir, encoder=encoder)
    queries = to_queries(load_puzzles(train, vocab), vocab)
    descriptions = list(vocab.descriptions.values())
    model = fit_or_load(queries, descriptions, index_encoder(ranker, encoder), cache_dir, shipped=model_dir)
    model.save(model_dir, fitted_key(model, queries, descriptions))
    return model
