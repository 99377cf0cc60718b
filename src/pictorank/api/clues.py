"""The clue-giver behind POST /suggest, as one service holds it: the suggester that
pictorank.suggest.assembly builds over the served model's encoders, and the service's lock around
it. It is built in the background after start-up (pictorank.api.app), so /ready does not wait for
it. No HTTP here; the route is `pictorank.api.routes.suggest`.

The clue model learns from the service's training puzzles (`PICTORANK_SUGGEST_TRAIN`, by default
the bundled train.csv). Its fit is read back from the served model's folder, where `pictorank
train` leaves it, or from `<cache_dir>/suggest/` when the same fit was saved there; a service whose
fit is in neither (other training puzzles or hints) fits it once. Without training puzzles the
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

import logging
import threading
from dataclasses import dataclass
from typing import Sequence

from pictorank.api.service import RankingService
from pictorank.api.settings import Settings
from pictorank.encoders import LockedEncoder
from pictorank.errors import PictorankError
from pictorank.suggest import Suggester, Suggestion
from pictorank.suggest.assembly import assemble_suggester, training_clues
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
        suggester = assemble_suggester(clues, service.vocab, service.encoders, settings.cache_dir, service.model_dir,
                                       guesser, fit_with=shared)  # type: ignore[arg-type]
    except PictorankError as exc:
        log.warning("POST /suggest disabled: %s", exc)
        return ClueGiver(error=f"the clue-giver has no training puzzles: {exc} (set PICTORANK_SUGGEST_TRAIN)")
    return ClueGiver(suggester, service, settings.suggest_guesser)
