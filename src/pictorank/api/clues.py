"""The clue-giver behind POST /suggest, as one service holds it: the suggester that
pictorank.suggest.assembly builds over the served model's encoders, and the service's lock around
it. It is built in the background after start-up (pictorank.api.app): the port opens at once, and
/ready waits for it. No HTTP here; the route is `pictorank.api.routes.suggest`.

The clue model learns from the service's training puzzles (`PICTORANK_SUGGEST_TRAIN`, by default
the bundled train.csv). Its fit is read back from the served model's folder, where `pictorank
train` leaves it, or from `<cache_dir>/suggest/` when the same fit was saved there; a service whose
fit is in neither (other training puzzles or hints, a damaged copy) fits it once, in a child
process that leaves it in the cache (`fit_in_child`), before /ready. Without training puzzles the
rest of the service works, and /suggest answers 503 with the reason.

The guesser (`PICTORANK_SUGGEST_GUESSER`):

- `seed` (default): the task's seed baseline over the service's base encoder. It is independent
  of our own models, so a clue is not tuned to their quirks, and it is cheap (one sentence
  embedding per candidate clue).
- `served`: the ranker the service serves (e.g. the learned model): clues chosen to win against
  exactly the guesser that /rank and the game use; each candidate costs that ranker's features.

When the served model has a fine-tuned encoder, that encoder is the suggester's reader: it judges
how well each shortlisted clue reads as the word (pictorank.suggest.suggester).
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from pictorank.api.service import RankingService
from pictorank.api.settings import Settings
from pictorank.encoders import Cancelled, LockedEncoder
from pictorank.errors import PictorankError
from pictorank.memory import release_memory
from pictorank.suggest import Suggester, Suggestion
from pictorank.suggest.assembly import assemble_suggester, fit_into_cache, training_clues
from pictorank.suggest.rules import check_request

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
        # The game rule bans pictograms naming the words given to avoid; the nearest answers that
        # stand in when none is given are only judged against (the suggester finds the same ones).
        with self.service.lock:
            suggestions = self.suggester.suggest(word, list(avoid), max_length=max_length, top=top,
                                                 use_known=use_known)
            neighbours = not avoid
            if neighbours:
                avoid = self.suggester.hardest_neighbours(word)
        return list(avoid), neighbours, suggestions


    def explain(self, word: str, avoid: Sequence[str], hint_ids: Sequence[int]) -> Suggestion:
        """The clue `hint_ids` for `word` as the suggester explains its own (Suggester.explain)."""
        assert self.suggester is not None and self.service is not None
        with self.service.lock:
            return self.suggester.explain(word, list(avoid), hint_ids)


def build_clue_giver(settings: Settings, service: RankingService, stop: threading.Event | None = None) -> ClueGiver:
    """Fit (or read back) the clue model on the settings' training puzzles, over the served model's
    encoders. A problem becomes the `error` that /suggest answers with; only `stop`, set, raises
    pictorank.encoders.Cancelled.

    The fit encodes through the service's encoder under the service's lock, a chunk at a time,
    while /rank goes on using the same encoder."""
    train = settings.suggest_train
    if train is None:
        return ClueGiver(error="the clue-giver is off: no training puzzles (set PICTORANK_SUGGEST_TRAIN)")
    guesser = service.ranker if settings.suggest_guesser == "served" else None
    try:
        clues = training_clues(train, service.vocab)
        shared = LockedEncoder(service.encoders.base, service.lock, stop)
        fit_elsewhere = functools.partial(fit_in_child, settings, service.model_dir, train, service.encoders.base.model_id,
                                          stop)
        suggester = assemble_suggester(clues, service.vocab, service.encoders, settings.cache_dir, service.model_dir,
                                       guesser, fit_with=shared, fit_elsewhere=fit_elsewhere)  # type: ignore[arg-type]
    except PictorankError as exc:
        log.warning("POST /suggest disabled: %s", exc)
        return ClueGiver(error=f"the clue-giver has no training puzzles: {exc} (set PICTORANK_SUGGEST_TRAIN)")
    release_memory()  # what reading or fitting the clue model freed goes back to the system
    return ClueGiver(suggester, service, settings.suggest_guesser)


def fit_in_child(settings: Settings, model_dir: Path | None, train: Path, encoder_id: str,
                 stop: threading.Event | None) -> None:
    """Fit the clue model in a child process that leaves it in the cache, where the service reads
    it back. A fit imports the training stack and fine-tunes the main-idea tower: done in the
    service's own process, that memory stayed with it for good (about twice a served model's).
    A child that cannot start, fails, or would build another encoder than the service's
    `encoder_id` leaves nothing in the cache, and the caller fits itself."""
    log.warning("fitting the clue model in a child process; /ready waits for it")
    try:
        child = multiprocessing.get_context("spawn").Process(
            target=_fit_and_exit, args=(model_dir, train, settings, encoder_id), name="pictorank-clue-model")
        child.start()
    except (OSError, AssertionError) as exc:  # AssertionError: a daemonic process may have no children
        log.warning("cannot fit the clue model in a child process (%s): fitting it here", exc)
        return
    while child.is_alive():
        child.join(timeout=0.5)
        if stop is not None and stop.is_set():
            child.terminate()
            child.join()
            raise Cancelled("shutting down")
    if child.exitcode != 0:
        log.warning("the clue model's fit in a child process ended with exit code %s: fitting it here", child.exitcode)


def _fit_and_exit(model_dir: Path | None, train: Path, settings: Settings, encoder_id: str) -> None:
    """The child's work: its exit code says whether it fitted (0), could not build the service's
    encoder (3), or could not fit (2, with one line: e.g. a serving install has no torch)."""
    try:
        fitted = fit_into_cache(model_dir, train, settings.hints, settings, encoder_id)
    except PictorankError as exc:
        print(f"pictorank: the clue model cannot be fitted here: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if not fitted:
        raise SystemExit(3)
